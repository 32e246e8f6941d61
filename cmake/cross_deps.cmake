# Dependencies of a cross build (CMAKE_CROSSCOMPILING, e.g. aarch64 with
# cmake/toolchains/aarch64-linux-gnu.cmake), included from the top CMakeLists.txt instead
# of the host's find_package calls, whose libraries are built for the host.
#
# The runtime and the CLI use FlatBuffers, xxHash (XXH_INLINE_ALL) and CLI11 as header-only
# libraries, so their host headers serve any target. They are not put on the include path
# as /usr/include (that would shadow the cross sysroot's libc headers): each is linked by
# name into ${CMAKE_BINARY_DIR}/host_headers. GoogleTest is built from the sources that
# Debian's libgtest-dev ships in /usr/src/googletest, with the cross compiler.
#
# Defines: flatbuffers::flatbuffers, CLI11::CLI11 (INTERFACE targets), XXHASH_INCLUDE_DIR,
# and with TESSERA_BUILD_TESTS GTest::gtest and GTest::gtest_main.

set(_tsr_host_inc /usr/include CACHE INTERNAL "")
set(_tsr_hh ${CMAKE_BINARY_DIR}/host_headers)
file(MAKE_DIRECTORY ${_tsr_hh})
foreach(_entry flatbuffers xxhash.h xxh3.h CLI)
  if(NOT EXISTS ${_tsr_host_inc}/${_entry})
    if(_entry STREQUAL "xxh3.h")
      continue()  # older xxHash: everything is in xxhash.h
    endif()
    message(FATAL_ERROR "cross build: ${_tsr_host_inc}/${_entry} is missing; run scripts/install_deps.sh "
                        "(libflatbuffers-dev, libxxhash-dev, libcli11-dev)")
  endif()
  file(CREATE_LINK ${_tsr_host_inc}/${_entry} ${_tsr_hh}/${_entry} SYMBOLIC)
endforeach()

add_library(flatbuffers::flatbuffers INTERFACE IMPORTED)
set_target_properties(flatbuffers::flatbuffers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${_tsr_hh})
add_library(CLI11::CLI11 INTERFACE IMPORTED)
set_target_properties(CLI11::CLI11 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${_tsr_hh})
set(CLI11_FOUND TRUE)
set(XXHASH_INCLUDE_DIR ${_tsr_hh} CACHE PATH "xxhash.h (host header, header-only use)" FORCE)

if(TESSERA_BUILD_TESTS AND NOT TARGET GTest::gtest)
  set(TESSERA_GTEST_SOURCE_DIR /usr/src/googletest CACHE PATH "GoogleTest sources to build for the target")
  if(NOT EXISTS ${TESSERA_GTEST_SOURCE_DIR}/CMakeLists.txt)
    message(FATAL_ERROR "cross build: no GoogleTest sources at ${TESSERA_GTEST_SOURCE_DIR} (Debian: libgtest-dev)")
  endif()
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  add_subdirectory(${TESSERA_GTEST_SOURCE_DIR} ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
  if(NOT TARGET GTest::gtest)  # GoogleTest >= 1.11 defines the namespaced aliases itself
    add_library(GTest::gtest ALIAS gtest)
    add_library(GTest::gtest_main ALIAS gtest_main)
  endif()
endif()
