/* tessera_classify: the C API of Tessera in one small program. Loads a .tsr model, fills its
 * (single, float32) input from a .npy file (float32, little endian, C order) or a raw file of
 * float32 values, runs it once, and prints output 0's top-k values with their flat indices.
 *
 *   tessera_classify MODEL.tsr INPUT.npy|INPUT.raw [-k K] [-t THREADS] [-b BACKENDS]
 *                    [-s DIMS] [--time]
 *
 *   -k K          how many of the largest values to print (default 5; all if fewer)
 *   -t THREADS    CPU threads (default 0: one per physical core)
 *   -b BACKENDS   backend preference list, e.g. "vulkan,cpu" (default "cpu")
 *   -s DIMS       input shape for a raw file, e.g. 1x3x48x192 (default: the model's declared
 *                 shape, when it has no symbolic dim)
 *   --time        also print the milliseconds from tsr_model_load to the end of the first run
 *
 * Output (stdout): "output '<name>' <dtype>[d0,d1,...]", then one line per value,
 * "<rank> <flat index> <value>" with the value printed with 9 significant digits. Errors go
 * to stderr with the API's message; the exit status is 1 (2 for bad usage).
 *
 * Builds with gcc -std=c99 -Wall -Wextra -Werror against the installed package (see
 * CMakeLists.txt here, or: gcc -std=c99 tessera_classify.c $(pkg-config --cflags --libs tessera)).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tessera/tessera.h>

#define MAX_RANK 16

static void usage(void) {
  fprintf(stderr,
          "usage: tessera_classify MODEL.tsr INPUT.npy|INPUT.raw [-k K] [-t THREADS] [-b BACKENDS] [-s DIMS] [--time]\n");
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Reads the whole file into a new buffer (*data, *size). Returns 0, or -1 with a message. */
static int read_file(const char* path, unsigned char** data, size_t* size) {
  FILE* f = fopen(path, "rb");
  long n;
  if (!f) {
    fprintf(stderr, "error: cannot open '%s': %s\n", path, strerror(errno));
    return -1;
  }
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "error: cannot size '%s'\n", path);
    fclose(f);
    return -1;
  }
  *data = (unsigned char*)malloc(n > 0 ? (size_t)n : 1);
  if (!*data || fread(*data, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "error: cannot read '%s'\n", path);
    free(*data);
    *data = NULL;
    fclose(f);
    return -1;
  }
  fclose(f);
  *size = (size_t)n;
  return 0;
}

/* Parses a .npy image (format 1.0, 2.0 or 3.0) holding float32 little-endian data in C
 * order: the shape into dims/rank and the offset of the data into *offset. Returns 0, or -1
 * with a message naming the file and the problem. */
static int parse_npy(const char* path, const unsigned char* d, size_t size, int64_t* dims, int* rank,
                     size_t* offset) {
  size_t header_len, start, i;
  const char* h;
  const char* p;
  char header[4096];
  if (size < 10 || memcmp(d, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "error: '%s' is not a .npy file (no \\x93NUMPY magic)\n", path);
    return -1;
  }
  if (d[6] == 1) {
    header_len = (size_t)d[8] | ((size_t)d[9] << 8);
    start = 10;
  } else if ((d[6] == 2 || d[6] == 3) && size >= 12) {
    header_len = (size_t)d[8] | ((size_t)d[9] << 8) | ((size_t)d[10] << 16) | ((size_t)d[11] << 24);
    start = 12;
  } else {
    fprintf(stderr, "error: '%s': unsupported .npy version %d\n", path, d[6]);
    return -1;
  }
  if (header_len >= sizeof header || start + header_len > size) {
    fprintf(stderr, "error: '%s': .npy header of %zu bytes is too long or truncated\n", path, header_len);
    return -1;
  }
  memcpy(header, d + start, header_len);
  header[header_len] = '\0';
  h = header;
  if (!strstr(h, "'descr': '<f4'")) {
    fprintf(stderr, "error: '%s': only float32 little-endian ('<f4') .npy files are supported; header: %s\n", path, h);
    return -1;
  }
  if (!strstr(h, "'fortran_order': False")) {
    fprintf(stderr, "error: '%s': Fortran-order .npy files are not supported\n", path);
    return -1;
  }
  p = strstr(h, "'shape': (");
  if (!p) {
    fprintf(stderr, "error: '%s': .npy header has no shape\n", path);
    return -1;
  }
  p += strlen("'shape': (");
  *rank = 0;
  for (;;) {
    char* end;
    long long v;
    while (*p == ' ' || *p == ',') ++p;
    if (*p == ')') break;
    errno = 0;
    v = strtoll(p, &end, 10);
    if (end == p || errno != 0 || v < 0 || *rank >= MAX_RANK) {
      fprintf(stderr, "error: '%s': bad .npy shape in header: %s\n", path, h);
      return -1;
    }
    dims[(*rank)++] = (int64_t)v;
    p = end;
  }
  *offset = start + header_len;
  (void)i;
  return 0;
}

/* Parses "1x3x48x192" into dims/rank. Returns 0 or -1. */
static int parse_dims(const char* s, int64_t* dims, int* rank) {
  *rank = 0;
  while (*s) {
    char* end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0 || *rank >= MAX_RANK) return -1;
    dims[(*rank)++] = (int64_t)v;
    s = end;
    if (*s == 'x' || *s == ',') ++s;
    else if (*s) return -1;
  }
  return *rank > 0 ? 0 : -1;
}

static int ends_with(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

#define CHECK(call)                                                                        \
  do {                                                                                     \
    tsr_status st_ = (call);                                                               \
    if (st_ != TSR_OK) {                                                                   \
      fprintf(stderr, "error: %s (%s)\n", tsr_last_error(), tsr_status_name(st_));         \
      goto done;                                                                           \
    }                                                                                      \
  } while (0)

int main(int argc, char** argv) {
  const char* model_path = NULL;
  const char* input_path = NULL;
  const char* backends = "cpu";
  const char* shape_arg = NULL;
  int k = 5, threads = 0, timing = 0, rc = 1, i, in_rank = 0;
  unsigned char* file = NULL;
  size_t file_size = 0, data_offset = 0, n_in = 0, n_out = 0, in_bytes = 0, out_bytes = 0, count, j;
  int64_t in_dims[MAX_RANK], out_dims[MAX_RANK];
  int32_t out_rank = 0;
  tsr_model* model = NULL;
  tsr_session_options* options = NULL;
  tsr_session* session = NULL;
  tsr_dtype in_dtype, out_dtype;
  const char* out_name = NULL;
  const char* dtype_name = NULL;
  const void* out_data = NULL;
  const float* values;
  size_t* order = NULL;
  double t0, t1;

  for (i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if ((!strcmp(a, "-k") || !strcmp(a, "-t") || !strcmp(a, "-b") || !strcmp(a, "-s")) && i + 1 >= argc) {
      usage();
      return 2;
    }
    if (!strcmp(a, "-k")) k = atoi(argv[++i]);
    else if (!strcmp(a, "-t")) threads = atoi(argv[++i]);
    else if (!strcmp(a, "-b")) backends = argv[++i];
    else if (!strcmp(a, "-s")) shape_arg = argv[++i];
    else if (!strcmp(a, "--time")) timing = 1;
    else if (a[0] == '-') {
      usage();
      return 2;
    } else if (!model_path) model_path = a;
    else if (!input_path) input_path = a;
    else {
      usage();
      return 2;
    }
  }
  if (!model_path || !input_path || k < 1) {
    usage();
    return 2;
  }

  /* The input file first: the timed part below is the library's, not the disk's. */
  if (read_file(input_path, &file, &file_size) != 0) goto done;
  if (ends_with(input_path, ".npy")) {
    if (parse_npy(input_path, file, file_size, in_dims, &in_rank, &data_offset) != 0) goto done;
  } else if (shape_arg && parse_dims(shape_arg, in_dims, &in_rank) != 0) {
    fprintf(stderr, "error: -s '%s' is not a shape like 1x3x48x192\n", shape_arg);
    goto done;
  }

  t0 = now_ms();
  CHECK(tsr_model_load(model_path, &model));
  CHECK(tsr_model_input_count(model, &n_in));
  CHECK(tsr_model_output_count(model, &n_out));
  if (n_in != 1 || n_out < 1) {
    fprintf(stderr, "error: '%s' has %zu inputs and %zu outputs; this example runs models with one input\n",
            model_path, n_in, n_out);
    goto done;
  }
  CHECK(tsr_model_input_dtype(model, 0, &in_dtype));
  if (in_dtype != TSR_DTYPE_FLOAT32) {
    CHECK(tsr_dtype_name(in_dtype, &dtype_name));
    fprintf(stderr, "error: the model's input is %s; this example feeds float32\n", dtype_name);
    goto done;
  }
  if (in_rank == 0 && !ends_with(input_path, ".npy")) {
    /* A raw file without -s: the declared shape, if it is fully known. */
    int32_t r = 0;
    CHECK(tsr_model_input_shape(model, 0, in_dims, MAX_RANK, &r));
    for (i = 0; i < r; ++i)
      if (in_dims[i] < 0) {
        fprintf(stderr, "error: the model's input has a symbolic dim %d: give the raw file's shape with -s\n", i);
        goto done;
      }
    in_rank = r;
  }
  CHECK(tsr_tensor_byte_size(TSR_DTYPE_FLOAT32, in_dims, (size_t)in_rank, &in_bytes));
  if (file_size - data_offset != in_bytes) {
    fprintf(stderr, "error: '%s' holds %zu bytes of data; the shape needs %zu\n", input_path, file_size - data_offset,
            in_bytes);
    goto done;
  }

  CHECK(tsr_session_options_create(&options));
  CHECK(tsr_session_options_set_threads(options, threads));
  CHECK(tsr_session_options_set_backends(options, backends));
  CHECK(tsr_session_create(model, options, &session));
  CHECK(tsr_session_set_input(session, 0, TSR_DTYPE_FLOAT32, in_dims, (size_t)in_rank, file + data_offset, in_bytes));
  CHECK(tsr_session_run(session));
  t1 = now_ms();

  CHECK(tsr_model_output_name(model, 0, &out_name));
  CHECK(tsr_model_output_dtype(model, 0, &out_dtype));
  CHECK(tsr_dtype_name(out_dtype, &dtype_name));
  CHECK(tsr_session_output_shape(session, 0, out_dims, MAX_RANK, &out_rank));
  CHECK(tsr_session_output_data(session, 0, &out_data, &out_bytes));
  printf("output '%s' %s[", out_name, dtype_name);
  for (i = 0; i < out_rank; ++i) printf("%s%lld", i ? "," : "", (long long)out_dims[i]);
  printf("]\n");
  if (out_dtype != TSR_DTYPE_FLOAT32) {
    fprintf(stderr, "error: output 0 is %s; this example prints float32 outputs\n", dtype_name);
    goto done;
  }
  values = (const float*)out_data;
  count = out_bytes / sizeof(float);
  if ((size_t)k > count) k = (int)count;
  /* Top-k by selection: k passes, each picking the largest value not yet taken. */
  order = (size_t*)malloc((count ? count : 1) * sizeof *order);
  if (!order) {
    fprintf(stderr, "error: out of memory\n");
    goto done;
  }
  for (j = 0; j < count; ++j) order[j] = j;
  for (i = 0; i < k; ++i) {
    size_t best = (size_t)i, tmp;
    for (j = (size_t)i + 1; j < count; ++j)
      if (values[order[j]] > values[order[best]]) best = j;
    tmp = order[i];
    order[i] = order[best];
    order[best] = tmp;
    printf("%d %zu %.9g\n", i + 1, order[i], (double)values[order[i]]);
  }
  if (timing) printf("load+first run: %.3f ms\n", t1 - t0);
  rc = 0;
done:
  free(order);
  tsr_session_destroy(session);
  tsr_session_options_destroy(options);
  tsr_model_destroy(model);
  free(file);
  return rc;
}
