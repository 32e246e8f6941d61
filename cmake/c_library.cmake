# The installable C library (included from the top CMakeLists.txt when TESSERA_BUILD_C_LIBRARY).
# Targets: tessera_c_shared (libtessera.so.<version>) and tessera_c_static (libtessera.a), both
# c_api.cc plus every object of tessera_runtime_objs (and the CUDA objects when built with CUDA).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_tsr_c_objects $<TARGET_OBJECTS:tessera_runtime_objs>)
if(TESSERA_WITH_CUDA)
  list(APPEND _tsr_c_objects $<TARGET_OBJECTS:tessera_cuda_objs>)
endif()
if(TESSERA_WITH_VULKAN)
  list(APPEND _tsr_c_objects $<TARGET_OBJECTS:tessera_vulkan_objs>)
endif()

add_library(tessera_c_shared SHARED ${TSR_C_API_SOURCES} ${_tsr_c_objects})
add_library(tessera_c_static STATIC ${TSR_C_API_SOURCES} ${_tsr_c_objects})
foreach(_t tessera_c_shared tessera_c_static)
  add_dependencies(${_t} tessera_schema)
  # The objects' include paths (not their link libraries: FlatBuffers is header-only here).
  target_include_directories(${_t} PRIVATE $<TARGET_PROPERTY:tessera_runtime_objs,INTERFACE_INCLUDE_DIRECTORIES>)
  target_include_directories(${_t} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/include>
                                          $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_definitions(${_t} PRIVATE ${TSR_C_API_DEFINITIONS})
  set_target_properties(${_t} PROPERTIES OUTPUT_NAME tessera)
endforeach()
set_target_properties(tessera_c_shared PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
                      EXPORT_NAME tessera)
set_target_properties(tessera_c_static PROPERTIES EXPORT_NAME tessera_static)
# Export only tsr_* (everything else of the runtime stays internal and can be dropped by
# --gc-sections); -z defs: an undefined symbol is a link error, not a load-time surprise.
set(_tsr_vscript ${CMAKE_CURRENT_SOURCE_DIR}/runtime/c_api/tessera.map)
target_link_options(tessera_c_shared PRIVATE "-Wl,--version-script=${_tsr_vscript}" -Wl,--gc-sections -Wl,-z,defs)
set_target_properties(tessera_c_shared PROPERTIES LINK_DEPENDS ${_tsr_vscript})
find_package(Threads REQUIRED)
target_link_libraries(tessera_c_shared PRIVATE Threads::Threads)
# A static archive carries no dependencies itself: its users link these (the package's
# target and tessera.pc's Libs.private say so).
# stdc++ by name: a C-only consumer project has no C++ linker to add it.
target_link_libraries(tessera_c_static INTERFACE stdc++ m Threads::Threads)
set(_tsr_pc_private "-lstdc++ -lm -lpthread")
if(TESSERA_WITH_CUDA)
  target_link_libraries(tessera_c_shared PRIVATE CUDA::cudart_static ${CMAKE_DL_LIBS})
  target_link_libraries(tessera_c_static INTERFACE CUDA::cudart_static ${CMAKE_DL_LIBS})
  set(_tsr_pc_private "${_tsr_pc_private} -lcudart_static -ldl -lrt")
endif()
if(TESSERA_WITH_VULKAN)
  # The Vulkan loader is dlopen'ed (backends/vulkan/vk_api.cc): only libdl is linked.
  target_link_libraries(tessera_c_shared PRIVATE ${CMAKE_DL_LIBS})
  target_link_libraries(tessera_c_static INTERFACE ${CMAKE_DL_LIBS})
endif()

install(TARGETS tessera_c_shared tessera_c_static EXPORT TesseraTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/tessera/tessera.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera)
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
set(TSR_C_WITH_CUDA ${TESSERA_WITH_CUDA})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TesseraConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/TesseraConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/TesseraConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/TesseraConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/TesseraConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
# tessera.pc: the prefix is taken from the file's own location at use time (pcfiledir), so
# the installed tree can be moved (and DESTDIR / --prefix at install time just work).
file(RELATIVE_PATH _tsr_pc_to_prefix ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" _tsr_pc_to_prefix "${_tsr_pc_to_prefix}")
set(TSR_PC_PREFIX "\${pcfiledir}/${_tsr_pc_to_prefix}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tessera.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tessera.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tessera.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
