# End-to-end tests of the tessera CLI: the four real models against onnxruntime (computed at
# test time), and bad-input cases that must fail cleanly. The tests are in
# real_models_test.py; this file registers them with ctest. Include it from
# tests/CMakeLists.txt:
#     include(${CMAKE_CURRENT_SOURCE_DIR}/e2e/e2e.cmake)
#
# They need the Python virtual environment of scripts/install_deps.sh (onnxruntime, numpy,
# scikit-learn) and the models of scripts/fetch_models.sh; both default to the build folder.
# When either is missing the tests are skipped (exit 77), saying why.

set(TESSERA_PYTHON "${CMAKE_BINARY_DIR}/venv/bin/python" CACHE FILEPATH
    "Python of the virtual environment made by scripts/install_deps.sh")
set(TESSERA_MODELS_DIR "${CMAKE_BINARY_DIR}/models" CACHE PATH
    "Folder of the real ONNX models fetched by scripts/fetch_models.sh")

if(NOT TARGET tessera OR NOT TARGET tessera_converter)
  message(STATUS "Tessera: no tessera CLI with the converter in this build (TESSERA_MINIMAL): no e2e tests")
else()
  set(_tsr_e2e_script ${CMAKE_CURRENT_LIST_DIR}/real_models_test.py)
  set(_tsr_e2e_work ${CMAKE_BINARY_DIR}/e2e)
  # The wrapper runs the venv's Python when it is there, and otherwise skips (exit 77) with
  # the reason, so that a build without the venv still runs the other tests.
  set(_tsr_e2e_cmd /bin/sh ${CMAKE_CURRENT_LIST_DIR}/with_venv_python.sh
      ${TESSERA_PYTHON} ${_tsr_e2e_script}
      --tessera $<TARGET_FILE:tessera> --models-dir ${TESSERA_MODELS_DIR})

  # Each real model, converted and run by Tessera, against onnxruntime (rel error <= 1e-4).
  foreach(_model det rec cls vad)
    add_test(NAME e2e.real_model.${_model}
             COMMAND ${_tsr_e2e_cmd} --work-dir ${_tsr_e2e_work}/${_model} --model ${_model})
    set_tests_properties(e2e.real_model.${_model} PROPERTIES
      LABELS "e2e" SKIP_RETURN_CODE 77 TIMEOUT 1500
      ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
  endforeach()

  # Each real model on the Vulkan backend against the CPU backend and onnxruntime (rel error
  # <= 1e-4); skipped when no Vulkan device is found.
  if(TESSERA_WITH_VULKAN)
    foreach(_model det rec cls vad)
      add_test(NAME e2e.vulkan.real_model.${_model}
               COMMAND ${_tsr_e2e_cmd} --work-dir ${_tsr_e2e_work}/vulkan_${_model} --model ${_model} --backend vulkan)
      set_tests_properties(e2e.vulkan.real_model.${_model} PROPERTIES
        LABELS "e2e;vulkan" SKIP_RETURN_CODE 77 TIMEOUT 1500
        ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
    endforeach()
  endif()

  # Bad input at the command line: a clean non-zero exit that names the problem.
  foreach(_case convert_missing_file convert_malformed_onnx run_missing_input run_wrong_shape
                run_wrong_dtype run_truncated_tsr unknown_flag run_threads)
    add_test(NAME e2e.cli.${_case}
             COMMAND ${_tsr_e2e_cmd} --work-dir ${_tsr_e2e_work}/${_case} --case ${_case})
    set_tests_properties(e2e.cli.${_case} PROPERTIES
      LABELS "e2e" SKIP_RETURN_CODE 77 TIMEOUT 600
      ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
  endforeach()
endif()

# Converter passes and error paths on small models built at test time, against onnxruntime.
if(TARGET tessera AND TARGET tessera_converter)
  foreach(_case conv_bn_fold constant_fold dead_code external_data if_runtime_cond opset7 opset1 pb_io
                unsupported_op wrong_rank_input hostile_strides0 unsorted_chain hostile_external bench_json)
    add_test(NAME e2e.converter.${_case}
             COMMAND /bin/sh ${CMAKE_CURRENT_LIST_DIR}/with_venv_python.sh ${TESSERA_PYTHON}
                     ${CMAKE_CURRENT_LIST_DIR}/converter_test.py --tessera $<TARGET_FILE:tessera>
                     --work-dir ${CMAKE_BINARY_DIR}/e2e/converter_${_case} --case ${_case})
    set_tests_properties(e2e.converter.${_case} PROPERTIES
      LABELS "e2e" SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
  endforeach()
endif()

# The C example (apps/examples/c) built against the installed package (find_package shared
# and static, pkg-config) and run on the PP-OCR direction classifier, against `tessera run`;
# also checks what the installed libtessera.so links and exports (c_example_test.py).
if(TARGET tessera AND TARGET tessera_converter AND TARGET tessera_c_shared)
  add_test(NAME e2e.c_example
           COMMAND /bin/sh ${CMAKE_CURRENT_LIST_DIR}/with_venv_python.sh ${TESSERA_PYTHON}
                   ${CMAKE_CURRENT_LIST_DIR}/c_example_test.py --build-dir ${CMAKE_BINARY_DIR}
                   --source-dir ${PROJECT_SOURCE_DIR} --host-tessera $<TARGET_FILE:tessera>
                   --models-dir ${TESSERA_MODELS_DIR} --work-dir ${CMAKE_BINARY_DIR}/e2e/c_example --skip-missing)
  set_tests_properties(e2e.c_example PROPERTIES LABELS "e2e" SKIP_RETURN_CODE 77 TIMEOUT 900
                       ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
endif()

# The training module through tessera-finetune and tessera export (tests/e2e/train_test.py):
# optimizer steps against NumPy, the digits demo, ONNX export against onnxruntime, kill and
# resume, bad input, and the PP-OCR classifier with a new head.
if(TARGET tessera AND TARGET tessera_converter AND TARGET tessera-finetune)
  foreach(_case numpy_step_mlp_sgd numpy_step_mlp_adamw numpy_step_cnn_sgd numpy_step_cnn_adamw numpy_step_mlp_sgd_mse
                digits export resume bad_input cls_head)
    add_test(NAME e2e.train.${_case}
             COMMAND /bin/sh ${CMAKE_CURRENT_LIST_DIR}/with_venv_python.sh ${TESSERA_PYTHON}
                     ${CMAKE_CURRENT_LIST_DIR}/train_test.py --tessera $<TARGET_FILE:tessera>
                     --finetune $<TARGET_FILE:tessera-finetune> --models-dir ${TESSERA_MODELS_DIR}
                     --work-dir ${CMAKE_BINARY_DIR}/e2e/train_${_case} --case ${_case})
    set_tests_properties(e2e.train.${_case} PROPERTIES
      LABELS "e2e;train" SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
  endforeach()
endif()
