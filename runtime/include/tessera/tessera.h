/*
 * tessera.h — the C API of Tessera: load a .tsr model and run it on the CPU (or a GPU
 * backend) from C, C++ or any language with a C FFI. C99; includes only <stddef.h> and
 * <stdint.h>. Link libtessera (shared or static; find_package(Tessera) gives
 * Tessera::tessera, pkg-config gives `tessera`).
 *
 * Usage (error handling shortened; every call returns a tsr_status):
 *
 *   #include <tessera/tessera.h>
 *
 *   tsr_model* model = NULL;
 *   tsr_session* session = NULL;
 *   if (tsr_model_load("cls.tsr", &model) != TSR_OK) {
 *     fprintf(stderr, "%s\n", tsr_last_error());
 *     return 1;
 *   }
 *   tsr_session_options* opts = NULL;
 *   tsr_session_options_create(&opts);
 *   tsr_session_options_set_threads(opts, 2);
 *   tsr_session_options_set_backends(opts, "vulkan,cpu");   // vulkan if there, else cpu
 *   tsr_session_create(model, opts, &session);
 *   tsr_session_options_destroy(opts);                      // the session keeps a copy
 *
 *   float image[1 * 3 * 48 * 192];                           // NCHW, filled by the caller
 *   const int64_t dims[4] = {1, 3, 48, 192};
 *   tsr_session_set_input(session, 0, TSR_DTYPE_FLOAT32, dims, 4, image, sizeof image);
 *   float probs[2];                                          // optional: caller's buffer
 *   tsr_session_set_output_buffer(session, 0, probs, sizeof probs);
 *   if (tsr_session_run(session) != TSR_OK) fprintf(stderr, "%s\n", tsr_last_error());
 *   // probs now holds output 0; tsr_session_output_data() gives any output's bytes.
 *
 *   tsr_session_destroy(session);
 *   tsr_model_destroy(model);
 *
 * Conventions that hold for every function below unless its comment says otherwise:
 *  - It returns TSR_OK or an error code; on error, tsr_last_error() tells why (naming the
 *    argument, input, output or file), and out-parameters are left unchanged.
 *  - A null handle or a null pointer where one is needed is TSR_INVALID_ARGUMENT, never
 *    a crash. No C++ exception crosses this API.
 *  - Out-parameters come last. Handles are created by tsr_<object>_create / _load and freed
 *    by tsr_<object>_destroy; destroying NULL does nothing and returns TSR_OK (as free()).
 *  - Tensors are dense, row-major (C order), outermost dim first: image models take NCHW.
 *    Sizes are in bytes where the name says bytes, in elements where it says count.
 *  - Thread safety: different sessions may run on different threads at once; one session
 *    must not be used by two threads at the same time (a tsr_session_run while another is in
 *    progress on the same session fails with TSR_INVALID_ARGUMENT; other overlaps are not
 *    detected). Models may be shared by sessions on
 *    any threads. tsr_last_error() is per thread.
 */
#ifndef TESSERA_TESSERA_H_
#define TESSERA_TESSERA_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TSR_API
#elif defined(__GNUC__)
#define TSR_API __attribute__((visibility("default")))
#else
#define TSR_API
#endif

/* ---- status codes and errors ---- */

/* Result of every call. The values are stable (the ABI). */
typedef enum tsr_status {
  TSR_OK = 0,
  TSR_INVALID_ARGUMENT = 1, /* bad input from the caller: null pointer, shape, dtype, size, name */
  TSR_INVALID_FILE = 2,     /* a corrupt or unsupported .tsr file or buffer */
  TSR_NOT_FOUND = 3,        /* a named input or output does not exist */
  TSR_UNIMPLEMENTED = 4,    /* an op, attribute or dtype Tessera does not support yet */
  TSR_OUT_OF_MEMORY = 5,    /* an allocation failed, or the memory limit would be exceeded */
  TSR_INTERNAL = 6,         /* a bug in Tessera: please report it with tsr_last_error() */
  TSR_IO_ERROR = 7,         /* a file could not be opened, read or mapped */
  /* Not codes: they make the enum as wide as int32 (as Vulkan's *_MAX_ENUM), so that any
   * int a caller passes (e.g. to tsr_status_name) is a valid value of the type. */
  TSR_STATUS_RANGE_MIN_ = -0x7fffffff - 1,
  TSR_STATUS_RANGE_MAX_ = 0x7fffffff
} tsr_status;

/* The message of the last failed call on this thread ("" if none has failed). The text
 * stays valid until the next failing call on the same thread. Returns a string, not a
 * status: it cannot fail. */
TSR_API const char* tsr_last_error(void);

/* The name of a status code: "OK", "INVALID_ARGUMENT", ...; "UNKNOWN" for other values.
 * Returns a static string, not a status: it cannot fail. */
TSR_API const char* tsr_status_name(tsr_status status);

/* ---- versions ---- */

/* The library's version (semantic versioning). Errors: TSR_INVALID_ARGUMENT if any
 * pointer is null. */
TSR_API tsr_status tsr_get_version(int* major, int* minor, int* patch);

/* The newest .tsr format version this library reads (and the one it writes). Files of a
 * newer format are rejected by tsr_model_load with TSR_INVALID_FILE. */
TSR_API tsr_status tsr_get_format_version(uint32_t* format_version);

/* ---- element types and tensor helpers ---- */

/* Element types. The values are ONNX TensorProto.DataType codes. Strings are not tensors
 * here. bool is one byte per element (0 or 1); int4/uint4 are one element per byte. */
typedef enum tsr_dtype {
  TSR_DTYPE_UNDEFINED = 0,
  TSR_DTYPE_FLOAT32 = 1,
  TSR_DTYPE_UINT8 = 2,
  TSR_DTYPE_INT8 = 3,
  TSR_DTYPE_UINT16 = 4,
  TSR_DTYPE_INT16 = 5,
  TSR_DTYPE_INT32 = 6,
  TSR_DTYPE_INT64 = 7,
  TSR_DTYPE_BOOL = 9,
  TSR_DTYPE_FLOAT16 = 10,
  TSR_DTYPE_FLOAT64 = 11,
  TSR_DTYPE_UINT32 = 12,
  TSR_DTYPE_UINT64 = 13,
  TSR_DTYPE_BFLOAT16 = 16,
  TSR_DTYPE_FLOAT8E4M3FN = 17,
  TSR_DTYPE_FLOAT8E4M3FNUZ = 18,
  TSR_DTYPE_FLOAT8E5M2 = 19,
  TSR_DTYPE_FLOAT8E5M2FNUZ = 20,
  TSR_DTYPE_UINT4 = 21,
  TSR_DTYPE_INT4 = 22,
  /* Not element types: they make the enum as wide as int32, so that any int a caller passes
   * is a valid value of the type (and rejected with TSR_INVALID_ARGUMENT). */
  TSR_DTYPE_RANGE_MIN_ = -0x7fffffff - 1,
  TSR_DTYPE_RANGE_MAX_ = 0x7fffffff
} tsr_dtype;

/* Bytes per element of `dtype` into *size. Errors: TSR_INVALID_ARGUMENT for a value that
 * is not a tsr_dtype above (or TSR_DTYPE_UNDEFINED), or a null `size`. */
TSR_API tsr_status tsr_dtype_size(tsr_dtype dtype, size_t* size);

/* The ONNX name of `dtype` ("float", "int64", ...) into *name (a static string).
 * Errors: as tsr_dtype_size. */
TSR_API tsr_status tsr_dtype_name(tsr_dtype dtype, const char** name);

/* Number of elements of a tensor with `rank` dims `dims` (the product; 1 for rank 0, when
 * `dims` may be NULL) into *count. Errors: TSR_INVALID_ARGUMENT for a negative dim
 * (symbolic dims, -1, are not sizes), a null `dims` with rank > 0, or a product that
 * overflows or exceeds 2^40. */
TSR_API tsr_status tsr_tensor_element_count(const int64_t* dims, size_t rank, size_t* count);

/* Bytes of a dense tensor of `dtype` and shape `dims` (element count * dtype size) into
 * *bytes. Errors: as tsr_tensor_element_count and tsr_dtype_size. */
TSR_API tsr_status tsr_tensor_byte_size(tsr_dtype dtype, const int64_t* dims, size_t rank, size_t* bytes);

/* ---- models ---- */

/* A loaded, verified .tsr model: its graph, weights and input/output declarations.
 * Immutable; may be shared by any number of sessions on any threads. */
typedef struct tsr_model tsr_model;

/* Loads the .tsr file at `path` (UTF-8) by mmap: weights are not copied, so loading costs
 * O(graph), not O(weights). The FlatBuffer, every segment's bounds, alignment and checksum,
 * and the graph are verified first. On success *model is a new handle owned by the caller
 * (free it with tsr_model_destroy; the mapping lives until the model and every session made
 * from it are destroyed). The file must not be truncated or rewritten in place while the
 * model is loaded: the weights are read from the mapping at run time, so a file cut short
 * afterwards ends the process with SIGBUS (a checksum cannot protect memory that is gone).
 * Write a new file to another name and rename it (as `tessera convert` does), or load a
 * copy with tsr_model_load_buffer. Errors: TSR_INVALID_ARGUMENT (null pointer), TSR_IO_ERROR
 * (cannot open or map the file), TSR_INVALID_FILE (corrupt, truncated, wrong identifier,
 * newer format version, checksum mismatch; the message names the file and the problem). */
TSR_API tsr_status tsr_model_load(const char* path, tsr_model** model);

/* Loads a .tsr image from the caller's memory WITHOUT COPYING it: weights are read in
 * place. `data` (`size` bytes, 64-byte aligned so that tensors inside it keep their
 * alignment) stays owned by the caller, who must keep it alive and unchanged until the
 * model and every session made from it are destroyed. Verified as tsr_model_load (the
 * message calls the image "<buffer>"). Errors: TSR_INVALID_ARGUMENT (null pointer, size 0,
 * `data` not 64-byte aligned), TSR_INVALID_FILE (corrupt or truncated image). */
TSR_API tsr_status tsr_model_load_buffer(const void* data, size_t size, tsr_model** model);

/* Frees a model handle. Sessions made from it keep working (they share the model).
 * NULL does nothing. Always TSR_OK. */
TSR_API tsr_status tsr_model_destroy(tsr_model* model);

/* Number of graph inputs (not counting weights) / outputs into *count. */
TSR_API tsr_status tsr_model_input_count(const tsr_model* model, size_t* count);
TSR_API tsr_status tsr_model_output_count(const tsr_model* model, size_t* count);

/* The name of input / output `index` (0-based, model order) into *name. The string is
 * owned by the model: valid until tsr_model_destroy. Errors: TSR_INVALID_ARGUMENT for a
 * null pointer or an index >= the count (the message gives the count). */
TSR_API tsr_status tsr_model_input_name(const tsr_model* model, size_t index, const char** name);
TSR_API tsr_status tsr_model_output_name(const tsr_model* model, size_t index, const char** name);

/* The index of the input / output called `name` into *index. Errors: TSR_NOT_FOUND (the
 * message lists the model's names), TSR_INVALID_ARGUMENT (null pointer). */
TSR_API tsr_status tsr_model_input_index(const tsr_model* model, const char* name, size_t* index);
TSR_API tsr_status tsr_model_output_index(const tsr_model* model, const char* name, size_t* index);

/* The declared element type of input / output `index` into *dtype. Errors: as _name. */
TSR_API tsr_status tsr_model_input_dtype(const tsr_model* model, size_t index, tsr_dtype* dtype);
TSR_API tsr_status tsr_model_output_dtype(const tsr_model* model, size_t index, tsr_dtype* dtype);

/* The declared shape of input / output `index`: *rank gets the number of dims (-1 when the
 * model does not declare the rank) and dims[0..rank) the sizes, -1 for a symbolic dim
 * (e.g. "batch"). `dims` may be NULL when `capacity` (elements of `dims`) is 0, to ask for
 * the rank only. Errors: as _name, and TSR_INVALID_ARGUMENT when capacity < rank (*rank is
 * then still set, so the caller can retry with enough room). */
TSR_API tsr_status tsr_model_input_shape(const tsr_model* model, size_t index, int64_t* dims, size_t capacity,
                                         int32_t* rank);
TSR_API tsr_status tsr_model_output_shape(const tsr_model* model, size_t index, int64_t* dims, size_t capacity,
                                          int32_t* rank);

/* ---- session options ---- */

/* How a session runs: threads, backends, memory limit. Owned by the caller; a session
 * copies what it needs at tsr_session_create, so options may be destroyed right after. */
typedef struct tsr_session_options tsr_session_options;

/* A new options object with the defaults: threads 0 (one per physical core), backends
 * "cpu", no memory limit beyond the machine's physical memory. Free with
 * tsr_session_options_destroy. Errors: TSR_INVALID_ARGUMENT (null pointer),
 * TSR_OUT_OF_MEMORY. */
TSR_API tsr_status tsr_session_options_create(tsr_session_options** options);

/* Frees an options object. NULL does nothing. Always TSR_OK. */
TSR_API tsr_status tsr_session_options_destroy(tsr_session_options* options);

/* Threads for CPU kernels, the calling thread included; 0 = one per physical core.
 * Errors: TSR_INVALID_ARGUMENT when below 0 or above 1024. */
TSR_API tsr_status tsr_session_options_set_threads(tsr_session_options* options, int threads);

/* Backends in order of preference, comma-separated, e.g. "vulkan,cpu" (spaces around names
 * are ignored). Known names: "cpu", "cuda", "vulkan". A known backend that this build or
 * machine lacks is skipped at tsr_session_create in favour of the next one; nodes no listed
 * backend supports run on the CPU, which is always the last resort. Errors:
 * TSR_INVALID_ARGUMENT for an unknown name (the message names it and lists the known
 * ones), an empty list or an empty name; the options are then unchanged. */
TSR_API tsr_status tsr_session_options_set_backends(tsr_session_options* options, const char* backends);

/* The most bytes the session's activation memory (the arena, planned per input shape) may
 * take; 0 = the machine's physical memory. A shape set needing more makes
 * tsr_session_set_input_shape / tsr_session_run fail with TSR_OUT_OF_MEMORY instead of
 * exhausting the machine. Weights (mapped from the file) do not count. */
TSR_API tsr_status tsr_session_options_set_memory_limit(tsr_session_options* options, uint64_t bytes);

/* ---- sessions ---- */

/* A model prepared to run: the backends, the thread pool, the plan for the current input
 * shapes and its activation memory, the bound inputs and output buffers. */
typedef struct tsr_session tsr_session;

/* A new session running `model` with `options` (NULL: the defaults). The session shares
 * the model (destroying the model handle first is allowed). On success *session is owned by
 * the caller (tsr_session_destroy). Errors: TSR_INVALID_ARGUMENT (null pointer), an invalid
 * graph (TSR_INVALID_FILE), TSR_OUT_OF_MEMORY. */
TSR_API tsr_status tsr_session_create(const tsr_model* model, const tsr_session_options* options,
                                      tsr_session** session);

/* Frees a session, its thread pool and activation memory. Caller's buffers are not
 * touched. NULL does nothing. Always TSR_OK. */
TSR_API tsr_status tsr_session_destroy(tsr_session* session);

/* Number of CPU threads the session uses (after resolving 0) into *threads. */
TSR_API tsr_status tsr_session_threads(const tsr_session* session, int* threads);

/* Declares the shape of input `index` ahead of data, e.g. to fix a symbolic batch or image
 * size. Once every input has a shape (from this call or tsr_session_set_input) the session
 * plans for them right away (shape inference, kernel choice, memory), so that
 * tsr_session_output_shape gives the concrete output shapes before the first run. A later
 * tsr_session_set_input with another shape replaces this one; a buffer already bound to
 * this input with another shape is unbound (tsr_session_run then asks for it). Errors: TSR_INVALID_ARGUMENT
 * (null handle, index out of range, null `dims` with rank > 0, a negative dim, a rank or a
 * fixed dim that contradicts the model's declaration: the message names the input, the dim
 * and both values), TSR_OUT_OF_MEMORY (over the memory limit), TSR_UNIMPLEMENTED (an op not
 * supported), TSR_INVALID_FILE (the model's shapes do not fit together). */
TSR_API tsr_status tsr_session_set_input_shape(tsr_session* session, size_t index, const int64_t* dims, size_t rank);

/* Binds the caller's buffer `data` as input `index`, WITHOUT COPYING: the buffer is read
 * during each tsr_session_run and must stay alive and unchanged until it is replaced or the
 * session destroyed. `dtype` must be the input's declared dtype, `dims[0..rank)` its shape
 * (fixed dims as declared, symbolic dims any size >= 0) and `bytes` exactly the tensor's
 * size (element count * dtype size). `data` may be NULL only for a tensor of 0 bytes.
 * Errors: TSR_INVALID_ARGUMENT naming the input for each mismatch (dtype, rank, dim, byte
 * size: "input 'x' needs 48 bytes (float[3,4]); 40 were given"), a null handle or pointer,
 * or an index out of range. */
TSR_API tsr_status tsr_session_set_input(tsr_session* session, size_t index, tsr_dtype dtype, const int64_t* dims,
                                         size_t rank, const void* data, size_t bytes);

/* Binds the caller's buffer `data` (`bytes` bytes) to output `index`: each run writes that
 * output there (one copy from the activation memory, no allocation), and
 * tsr_session_output_data then points into it. The buffer must stay alive until it is
 * replaced or the session destroyed. `data` NULL unbinds: the session then owns the
 * output's bytes. A buffer smaller than the output a run produces fails that run with
 * TSR_INVALID_ARGUMENT naming the output, its shape and both sizes (no caller buffer is
 * written then). Errors: TSR_INVALID_ARGUMENT (null handle, index out of range, `bytes` 0
 * with a non-null `data`). */
TSR_API tsr_status tsr_session_set_output_buffer(tsr_session* session, size_t index, void* data, size_t bytes);

/* Runs the model on the bound inputs. The first run for a new set of input shapes plans
 * (milliseconds); later runs with the same shapes reuse the plan. Outputs go to the bound
 * output buffers or to session-owned memory (tsr_session_output_data). Errors:
 * TSR_INVALID_ARGUMENT when an input has not been set ("input 'x' has not been set: call
 * tsr_session_set_input"), when an output buffer is too small, or a null handle;
 * TSR_OUT_OF_MEMORY over the memory limit; TSR_UNIMPLEMENTED for an op this build lacks;
 * other codes from the kernels, each naming the node. After a failed run the outputs of
 * the previous run are gone (tsr_session_output_data fails until a run succeeds). */
TSR_API tsr_status tsr_session_run(tsr_session* session);

/* The shape of output `index`, as tsr_model_output_shape's arguments. After a successful
 * run: the shape that run produced. Else, after every input's shape is known
 * (tsr_session_set_input_shape or tsr_session_set_input): the planned shape. Else: the
 * declared shape, -1 for symbolic dims. Errors: as tsr_model_output_shape. */
TSR_API tsr_status tsr_session_output_shape(tsr_session* session, size_t index, int64_t* dims, size_t capacity,
                                            int32_t* rank);

/* Output `index` of the last successful run: *data points to its bytes (dense, row-major,
 * the output's dtype) and *bytes gets their number. The bytes are in the caller's buffer
 * when one is bound, else owned by the session and valid until the next tsr_session_run
 * or tsr_session_destroy. Errors: TSR_INVALID_ARGUMENT for a
 * null pointer, an index out of range, or no successful run yet. */
TSR_API tsr_status tsr_session_output_data(const tsr_session* session, size_t index, const void** data,
                                           size_t* bytes);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* TESSERA_TESSERA_H_ */
