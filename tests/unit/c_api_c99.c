/* The C API from C: this file is compiled as C99 with -pedantic-errors -Wall -Wextra -Werror
 * (tests/CMakeLists.txt), which proves tessera.h is valid C, and it runs the model of
 * c_api_test.cc through the API, comparing output 0 with the reference values the C++ test
 * passes in. Returns 0 on success, else 1 with the reason in `message`. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tessera/tessera.h"

int tsr_c99_check(const char* tsr_path, const float* x, int batch, const float* expected_y, char* message,
                  size_t message_size);

#define CHECK(call)                                                                          \
  do {                                                                                       \
    tsr_status st_ = (call);                                                                 \
    if (st_ != TSR_OK) {                                                                     \
      snprintf(message, message_size, "%s -> %s: %s", #call, tsr_status_name(st_), tsr_last_error()); \
      goto done;                                                                             \
    }                                                                                        \
  } while (0)

int tsr_c99_check(const char* tsr_path, const float* x, int batch, const float* expected_y, char* message,
                  size_t message_size) {
  int rc = 1;
  tsr_model* model = NULL;
  tsr_session_options* options = NULL;
  tsr_session* session = NULL;
  size_t n_in = 0, n_out = 0, i;
  const char* name = NULL;
  int64_t dims[2];
  int32_t rank = 0;
  float y[64];
  size_t y_bytes = 0;

  CHECK(tsr_model_load(tsr_path, &model));
  CHECK(tsr_model_input_count(model, &n_in));
  CHECK(tsr_model_output_count(model, &n_out));
  if (n_in != 1 || n_out != 2) {
    snprintf(message, message_size, "expected 1 input and 2 outputs, got %zu and %zu", n_in, n_out);
    goto done;
  }
  CHECK(tsr_model_input_name(model, 0, &name));
  CHECK(tsr_model_input_shape(model, 0, dims, 2, &rank));
  if (strcmp(name, "x") != 0 || rank != 2 || dims[0] != -1 || dims[1] != 4) {
    snprintf(message, message_size, "input 0: %s rank %d dims %lld %lld", name, (int)rank, (long long)dims[0],
             (long long)dims[1]);
    goto done;
  }
  CHECK(tsr_session_options_create(&options));
  CHECK(tsr_session_options_set_threads(options, 1));
  CHECK(tsr_session_options_set_backends(options, "cpu"));
  CHECK(tsr_session_create(model, options, &session));
  dims[0] = batch;
  CHECK(tsr_session_set_input(session, 0, TSR_DTYPE_FLOAT32, dims, 2, x, (size_t)batch * 4 * sizeof(float)));
  CHECK(tsr_tensor_byte_size(TSR_DTYPE_FLOAT32, dims, 2, &y_bytes)); /* [batch, 4] -> bytes; output is [batch, 3] */
  y_bytes = y_bytes / 4 * 3;
  if (y_bytes > sizeof y) {
    snprintf(message, message_size, "batch %d too large for this check", batch);
    goto done;
  }
  CHECK(tsr_session_set_output_buffer(session, 0, y, sizeof y));
  CHECK(tsr_session_run(session));
  for (i = 0; i < y_bytes / sizeof(float); ++i) {
    if (fabsf(y[i] - expected_y[i]) > 1e-5f) {
      snprintf(message, message_size, "y[%zu] = %.9g, expected %.9g", i, (double)y[i], (double)expected_y[i]);
      goto done;
    }
  }
  rc = 0;
done:
  tsr_session_destroy(session);
  tsr_session_options_destroy(options);
  tsr_model_destroy(model);
  return rc;
}
