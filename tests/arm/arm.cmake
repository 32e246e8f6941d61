# The real-model check of a cross build (included from tests/CMakeLists.txt when
# TESSERA_KERNEL_TESTS_ONLY): the PP-OCR direction classifier converted by the host's full
# tessera, run by the host's tessera and by this build's tessera (through
# CMAKE_CROSSCOMPILING_EMULATOR, i.e. qemu-aarch64 for aarch64), outputs compared
# (tests/arm/model_vs_host.py: relative error <= 1e-5).
#
# Registered only when TESSERA_HOST_TESSERA names the host CLI (scripts/cross_build_arm64.sh
# passes it). Once registered, a missing model, Python or emulator fails the test with the
# reason: it never passes without running.

set(TESSERA_HOST_TESSERA "" CACHE FILEPATH "The host's tessera CLI with the converter (converts and runs the reference)")
set(TESSERA_HOST_PYTHON "" CACHE FILEPATH "Host Python with numpy, scikit-learn (the venv of scripts/install_deps.sh)")
set(TESSERA_MODELS_DIR "" CACHE PATH "Folder of the real ONNX models (scripts/fetch_models.sh)")

if(NOT TARGET tessera)
  message(STATUS "Tessera: no tessera CLI in this build: no ARM model test")
elseif(NOT TESSERA_HOST_TESSERA)
  message(STATUS "Tessera: TESSERA_HOST_TESSERA not set: no model test against the host build")
else()
  if(CMAKE_CROSSCOMPILING_EMULATOR)
    set(_tsr_emu "--emulator=${CMAKE_CROSSCOMPILING_EMULATOR}")
    string(REPLACE ";" " " _tsr_emu "${_tsr_emu}")
  else()
    set(_tsr_emu "--emulator=")
  endif()
  foreach(_model cls)
    add_test(NAME arm.model_vs_host.${_model}
             COMMAND ${TESSERA_HOST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/model_vs_host.py
                     --model ${_model} --host-tessera ${TESSERA_HOST_TESSERA}
                     --target-tessera $<TARGET_FILE:tessera> "${_tsr_emu}"
                     --models-dir ${TESSERA_MODELS_DIR} --work-dir ${CMAKE_BINARY_DIR}/arm_model/${_model})
    set_tests_properties(arm.model_vs_host.${_model} PROPERTIES LABELS "model" TIMEOUT 900
                         ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
  endforeach()
  # The C API on the target: this build's libtessera installed into a temporary prefix, the C
  # example cross-built against it (find_package shared and static, pkg-config with the
  # cross gcc), run through the emulator on the cls model and compared with the host's
  # `tessera run` (relative error <= 1e-5). Also checks libtessera.so's NEEDED and exports.
  if(TARGET tessera_c_shared)
    add_test(NAME arm.c_example
             COMMAND ${TESSERA_HOST_PYTHON} ${PROJECT_SOURCE_DIR}/tests/e2e/c_example_test.py
                     --build-dir ${CMAKE_BINARY_DIR} --source-dir ${PROJECT_SOURCE_DIR}
                     --host-tessera ${TESSERA_HOST_TESSERA} --models-dir ${TESSERA_MODELS_DIR}
                     --work-dir ${CMAKE_BINARY_DIR}/arm_c_example --toolchain ${CMAKE_TOOLCHAIN_FILE}
                     --cc ${CMAKE_C_COMPILER} "${_tsr_emu}")
    set_tests_properties(arm.c_example PROPERTIES LABELS "model" TIMEOUT 900 ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
  endif()
endif()
