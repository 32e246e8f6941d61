// The C API (tessera/tessera.h) on top of the C++ Session and the .tsr reader. Every entry
// point runs its body inside guard(): a Status that is not OK, a C++ exception of any kind,
// or a null pointer becomes a tsr_status plus a thread-local message; nothing unwinds into C.
#include "tessera/tessera.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "runtime/plan/plan.h"
#include "tessera/session.h"
#include "tessera/tsr_file.h"

#ifndef TESSERA_VERSION_MAJOR
#define TESSERA_VERSION_MAJOR 0
#define TESSERA_VERSION_MINOR 0
#define TESSERA_VERSION_PATCH 0
#endif

using tessera::DType;
using tessera::Result;
using tessera::Session;
using tessera::Shape;
using tessera::Status;
using tessera::StatusCode;
using tessera::Tensor;
using tessera::TensorInfo;

struct tsr_model {
  std::shared_ptr<const tessera::Model> model;
  std::vector<TensorInfo> inputs, outputs;
};

struct tsr_session_options {
  tessera::SessionOptions options;
};

struct tsr_session {
  struct Input {
    bool has_shape = false;   // shape is known (set_input_shape or set_input)
    Shape shape;
    bool bound = false;       // data is bound (set_input)
    const void* data = nullptr;
  };
  std::unique_ptr<Session> session;
  std::vector<Input> inputs;
  std::vector<Session::OutputBinding> bindings;
  bool have_outputs = false;
  std::vector<Tensor> outputs;  // of the last successful run
  std::atomic<bool> running{false};  // a tsr_session_run is in progress (catches two threads' runs)
};

namespace {

thread_local std::string t_last_error;

tsr_status to_c(StatusCode c) {
  switch (c) {
    case StatusCode::kOk: return TSR_OK;
    case StatusCode::kInvalidArgument: return TSR_INVALID_ARGUMENT;
    case StatusCode::kInvalidFile: return TSR_INVALID_FILE;
    case StatusCode::kNotFound: return TSR_NOT_FOUND;
    case StatusCode::kUnimplemented: return TSR_UNIMPLEMENTED;
    case StatusCode::kOutOfMemory: return TSR_OUT_OF_MEMORY;
    case StatusCode::kInternal: return TSR_INTERNAL;
    case StatusCode::kIoError: return TSR_IO_ERROR;
    case StatusCode::kUnavailable: return TSR_IO_ERROR;  // peers (training only; not reached through the C API)
  }
  return TSR_INTERNAL;
}

tsr_status fail(const char* fn, tsr_status code, const std::string& message) {
  // Assigning may itself throw bad_alloc; the code still reaches the caller.
  try {
    t_last_error = std::string(fn) + ": " + message;
  } catch (...) {
  }
  return code;
}

/// Runs `body` (returning a Status) and turns its result or any exception into a tsr_status.
template <typename F>
tsr_status guard(const char* fn, F&& body) noexcept {
  try {
    Status s = body();
    if (s.is_ok()) return TSR_OK;
    return fail(fn, to_c(s.code()), s.message());
  } catch (const std::bad_alloc&) {
    return fail(fn, TSR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(fn, TSR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(fn, TSR_INTERNAL, "internal error: unknown exception");
  }
}

Status null_arg(const char* name) { return tessera::invalid_argument("'" + std::string(name) + "' is null"); }
#define TSR_C_NONNULL(p) \
  do {                   \
    if (!(p)) return null_arg(#p); \
  } while (0)

Status check_dtype(tsr_dtype dtype) {
  int32_t code = static_cast<int32_t>(dtype);
  if (!tessera::dtype_is_valid(code) || code == 0 || code == static_cast<int32_t>(DType::kString))
    return tessera::invalid_argument("dtype " + std::to_string(code) + " is not a tsr_dtype");
  return Status::ok();
}

Status check_index(size_t index, size_t count, const char* what) {
  if (index >= count)
    return tessera::invalid_argument(std::string(what) + " index " + std::to_string(index) + " is out of range: the model has " +
                                     std::to_string(count) + " " + what + (count == 1 ? "" : "s"));
  return Status::ok();
}

Result<Shape> read_dims(const int64_t* dims, size_t rank) {
  if (rank > 0 && !dims) return tessera::invalid_argument("'dims' is null with rank " + std::to_string(rank));
  if (rank > 64) return tessera::invalid_argument("rank " + std::to_string(rank) + " is above 64");
  Shape s(dims, dims + rank);
  for (size_t d = 0; d < rank; ++d)
    if (s[d] < 0) return tessera::invalid_argument("dim " + std::to_string(d) + " is " + std::to_string(s[d]) + "; sizes are >= 0");
  // Too many elements is the caller's bad shape here, not a failed allocation.
  Result<int64_t> n = tessera::shape_numel(s);
  if (!n.is_ok()) return tessera::invalid_argument(n.status().message());
  return s;
}

/// Checks `shape` against the declaration of `info`: rank and fixed dims.
Status check_declared(const TensorInfo& info, const Shape& shape) {
  if (!info.has_shape) return Status::ok();
  if (shape.size() != info.shape.size())
    return tessera::invalid_argument("input '" + info.name + "' has rank " + std::to_string(info.shape.size()) +
                                     "; a shape of rank " + std::to_string(shape.size()) + " was given (" +
                                     tessera::shape_to_string(shape) + ")");
  for (size_t d = 0; d < shape.size(); ++d)
    if (info.shape[d].is_static() && info.shape[d].value != shape[d])
      return tessera::invalid_argument("input '" + info.name + "' dim " + std::to_string(d) + " is fixed at " +
                                       std::to_string(info.shape[d].value) + "; " + std::to_string(shape[d]) +
                                       " was given (" + tessera::shape_to_string(shape) + ")");
  return Status::ok();
}

Status write_shape(const Shape& s, bool known_rank, int64_t* dims, size_t capacity, int32_t* rank) {
  TSR_C_NONNULL(rank);
  if (!known_rank) {
    *rank = -1;
    return Status::ok();
  }
  if (capacity > 0 && !dims) return null_arg("dims");
  *rank = static_cast<int32_t>(s.size());
  if (capacity < s.size())
    return tessera::invalid_argument("the shape has rank " + std::to_string(s.size()) + "; 'dims' holds only " +
                                     std::to_string(capacity));
  for (size_t d = 0; d < s.size(); ++d) dims[d] = s[d];
  return Status::ok();
}

Status declared_shape(const TensorInfo& info, int64_t* dims, size_t capacity, int32_t* rank) {
  Shape s;
  for (const tessera::Dim& d : info.shape) s.push_back(d.is_static() ? d.value : -1);
  return write_shape(s, info.has_shape, dims, capacity, rank);
}

Status find_name(const std::vector<TensorInfo>& infos, const char* name, const char* what, size_t* index) {
  TSR_C_NONNULL(name);
  TSR_C_NONNULL(index);
  std::string names;
  for (size_t k = 0; k < infos.size(); ++k) {
    if (infos[k].name == name) {
      *index = k;
      return Status::ok();
    }
    names += (names.empty() ? "" : ", ") + ("'" + infos[k].name + "'");
  }
  return tessera::not_found(std::string("no ") + what + " '" + name + "'; the model's " + what + "s are: " + names);
}

/// The shapes of every input, or false when some input's shape is not known yet.
bool all_input_shapes(const tsr_session& s, std::vector<Shape>* shapes) {
  shapes->clear();
  for (const auto& in : s.inputs) {
    if (!in.has_shape) return false;
    shapes->push_back(in.shape);
  }
  return true;
}

/// Plans for the known input shapes. A model whose shapes depend on input values plans at
/// the run instead (not an error here).
Status prepare_if_complete(tsr_session& s) {
  std::vector<Shape> shapes;
  if (!all_input_shapes(s, &shapes)) return Status::ok();
  Status st = s.session->prepare(shapes);
  if (tessera::needs_input_values(st)) return Status::ok();
  return st;
}

const char* const kKnownBackends[] = {"cpu", "cuda", "vulkan"};

}  // namespace

extern "C" {

const char* tsr_last_error(void) { return t_last_error.c_str(); }

const char* tsr_status_name(tsr_status status) {
  switch (status) {
    case TSR_OK: return "OK";
    case TSR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case TSR_INVALID_FILE: return "INVALID_FILE";
    case TSR_NOT_FOUND: return "NOT_FOUND";
    case TSR_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case TSR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case TSR_INTERNAL: return "INTERNAL";
    case TSR_IO_ERROR: return "IO_ERROR";
    case TSR_STATUS_RANGE_MIN_:
    case TSR_STATUS_RANGE_MAX_: break;
  }
  return "UNKNOWN";
}

tsr_status tsr_get_version(int* major, int* minor, int* patch) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(major);
    TSR_C_NONNULL(minor);
    TSR_C_NONNULL(patch);
    *major = TESSERA_VERSION_MAJOR;
    *minor = TESSERA_VERSION_MINOR;
    *patch = TESSERA_VERSION_PATCH;
    return Status::ok();
  });
}

tsr_status tsr_get_format_version(uint32_t* format_version) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(format_version);
    *format_version = tessera::kTsrFormatVersion;
    return Status::ok();
  });
}

tsr_status tsr_dtype_size(tsr_dtype dtype, size_t* size) {
  return guard(__func__, [&]() -> Status {
    TSR_RETURN_IF_ERROR(check_dtype(dtype));
    TSR_C_NONNULL(size);
    *size = tessera::dtype_size(static_cast<DType>(dtype));
    return Status::ok();
  });
}

tsr_status tsr_dtype_name(tsr_dtype dtype, const char** name) {
  return guard(__func__, [&]() -> Status {
    TSR_RETURN_IF_ERROR(check_dtype(dtype));
    TSR_C_NONNULL(name);
    *name = tessera::dtype_name(static_cast<DType>(dtype));
    return Status::ok();
  });
}

tsr_status tsr_tensor_element_count(const int64_t* dims, size_t rank, size_t* count) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(count);
    TSR_ASSIGN_OR_RETURN(Shape s, read_dims(dims, rank));
    TSR_ASSIGN_OR_RETURN(int64_t n, tessera::shape_numel(s));
    *count = static_cast<size_t>(n);
    return Status::ok();
  });
}

tsr_status tsr_tensor_byte_size(tsr_dtype dtype, const int64_t* dims, size_t rank, size_t* bytes) {
  return guard(__func__, [&]() -> Status {
    TSR_RETURN_IF_ERROR(check_dtype(dtype));
    TSR_C_NONNULL(bytes);
    TSR_ASSIGN_OR_RETURN(Shape s, read_dims(dims, rank));
    TSR_ASSIGN_OR_RETURN(int64_t n, tessera::shape_numel(s));
    *bytes = static_cast<size_t>(n) * tessera::dtype_size(static_cast<DType>(dtype));
    return Status::ok();
  });
}

// ---- models ----

namespace {
Status make_model(std::shared_ptr<tessera::Model> m, tsr_model** out) {
  auto h = std::make_unique<tsr_model>();
  const tessera::Graph& g = m->graph;
  for (int i : g.inputs) h->inputs.push_back({g.values[i].name, g.values[i].dtype, g.values[i].has_shape, g.values[i].shape});
  for (int i : g.outputs)
    h->outputs.push_back({g.values[i].name, g.values[i].dtype, g.values[i].has_shape, g.values[i].shape});
  h->model = std::move(m);
  *out = h.release();
  return Status::ok();
}
}  // namespace

tsr_status tsr_model_load(const char* path, tsr_model** model) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(path);
    TSR_C_NONNULL(model);
    TSR_ASSIGN_OR_RETURN(std::shared_ptr<tessera::Model> m, tessera::read_tsr_file(path));
    TSR_RETURN_IF_ERROR(m->graph.validate());
    return make_model(std::move(m), model);
  });
}

tsr_status tsr_model_load_buffer(const void* data, size_t size, tsr_model** model) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(data);
    TSR_C_NONNULL(model);
    if (size == 0) return tessera::invalid_argument("'size' is 0");
    if (reinterpret_cast<uintptr_t>(data) % tessera::kTsrTensorAlignment != 0)
      return tessera::invalid_argument("'data' is not 64-byte aligned (tensors in the image must keep their alignment)");
    TSR_ASSIGN_OR_RETURN(std::shared_ptr<tessera::Model> m, tessera::read_tsr_buffer(data, size, nullptr));
    TSR_RETURN_IF_ERROR(m->graph.validate());
    return make_model(std::move(m), model);
  });
}

tsr_status tsr_model_destroy(tsr_model* model) {
  delete model;
  return TSR_OK;
}

tsr_status tsr_model_input_count(const tsr_model* model, size_t* count) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(model);
    TSR_C_NONNULL(count);
    *count = model->inputs.size();
    return Status::ok();
  });
}

tsr_status tsr_model_output_count(const tsr_model* model, size_t* count) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(model);
    TSR_C_NONNULL(count);
    *count = model->outputs.size();
    return Status::ok();
  });
}

#define TSR_C_INFO_GETTERS(kind)                                                                         \
  tsr_status tsr_model_##kind##_name(const tsr_model* model, size_t index, const char** name) {         \
    return guard(__func__, [&]() -> Status {                                                             \
      TSR_C_NONNULL(model);                                                                              \
      TSR_C_NONNULL(name);                                                                               \
      TSR_RETURN_IF_ERROR(check_index(index, model->kind##s.size(), #kind));                             \
      *name = model->kind##s[index].name.c_str();                                                        \
      return Status::ok();                                                                               \
    });                                                                                                  \
  }                                                                                                      \
  tsr_status tsr_model_##kind##_index(const tsr_model* model, const char* name, size_t* index) {        \
    return guard(__func__, [&]() -> Status {                                                             \
      TSR_C_NONNULL(model);                                                                              \
      return find_name(model->kind##s, name, #kind, index);                                              \
    });                                                                                                  \
  }                                                                                                      \
  tsr_status tsr_model_##kind##_dtype(const tsr_model* model, size_t index, tsr_dtype* dtype) {         \
    return guard(__func__, [&]() -> Status {                                                             \
      TSR_C_NONNULL(model);                                                                              \
      TSR_C_NONNULL(dtype);                                                                              \
      TSR_RETURN_IF_ERROR(check_index(index, model->kind##s.size(), #kind));                             \
      *dtype = static_cast<tsr_dtype>(model->kind##s[index].dtype);                                      \
      return Status::ok();                                                                               \
    });                                                                                                  \
  }                                                                                                      \
  tsr_status tsr_model_##kind##_shape(const tsr_model* model, size_t index, int64_t* dims, size_t capacity, \
                                      int32_t* rank) {                                                   \
    return guard(__func__, [&]() -> Status {                                                             \
      TSR_C_NONNULL(model);                                                                              \
      TSR_RETURN_IF_ERROR(check_index(index, model->kind##s.size(), #kind));                             \
      return declared_shape(model->kind##s[index], dims, capacity, rank);                                \
    });                                                                                                  \
  }
TSR_C_INFO_GETTERS(input)
TSR_C_INFO_GETTERS(output)
#undef TSR_C_INFO_GETTERS

// ---- session options ----

tsr_status tsr_session_options_create(tsr_session_options** options) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(options);
    *options = new tsr_session_options();
    return Status::ok();
  });
}

tsr_status tsr_session_options_destroy(tsr_session_options* options) {
  delete options;
  return TSR_OK;
}

tsr_status tsr_session_options_set_threads(tsr_session_options* options, int threads) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(options);
    if (threads < 0 || threads > 1024)
      return tessera::invalid_argument("threads is " + std::to_string(threads) +
                                       "; it must be 0 (one per physical core) or 1..1024");
    options->options.threads = threads;
    return Status::ok();
  });
}

tsr_status tsr_session_options_set_backends(tsr_session_options* options, const char* backends) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(options);
    TSR_C_NONNULL(backends);
    std::vector<std::string> names;
    std::string list(backends);
    // Messages quote at most 64 bytes of the caller's text (a 1 MiB list made a 2 MiB error).
    const auto quote = [](const std::string& t) { return t.size() <= 64 ? t : t.substr(0, 64) + "..."; };
    size_t start = 0;
    while (true) {
      size_t comma = list.find(',', start);
      std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      size_t b = name.find_first_not_of(" \t"), e = name.find_last_not_of(" \t");
      name = b == std::string::npos ? std::string() : name.substr(b, e - b + 1);
      if (name.empty()) return tessera::invalid_argument("backend list '" + quote(list) + "' has an empty name");
      bool known = false;
      for (const char* k : kKnownBackends) known |= name == k;
      if (!known)
        return tessera::invalid_argument("unknown backend '" + quote(name) + "' in '" + quote(list) +
                                         "' (known: cpu, cuda, vulkan)");
      for (const std::string& seen : names)
        if (seen == name) return tessera::invalid_argument("backend list '" + quote(list) + "' names '" + name + "' twice");
      names.push_back(name);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    options->options.backends = std::move(names);
    return Status::ok();
  });
}

tsr_status tsr_session_options_set_memory_limit(tsr_session_options* options, uint64_t bytes) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(options);
    options->options.max_arena_bytes = bytes;
    return Status::ok();
  });
}

// ---- sessions ----

tsr_status tsr_session_create(const tsr_model* model, const tsr_session_options* options, tsr_session** session) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(model);
    TSR_C_NONNULL(session);
    tessera::SessionOptions opts;
    if (options) opts = options->options;
    TSR_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, Session::create(model->model, opts));
    auto h = std::make_unique<tsr_session>();
    h->inputs.resize(s->inputs().size());
    h->bindings.resize(s->outputs().size());
    h->session = std::move(s);
    *session = h.release();
    return Status::ok();
  });
}

tsr_status tsr_session_destroy(tsr_session* session) {
  delete session;
  return TSR_OK;
}

tsr_status tsr_session_threads(const tsr_session* session, int* threads) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(session);
    TSR_C_NONNULL(threads);
    *threads = session->session->threads();
    return Status::ok();
  });
}

tsr_status tsr_session_set_input_shape(tsr_session* session, size_t index, const int64_t* dims, size_t rank) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(session);
    const auto& infos = session->session->inputs();
    TSR_RETURN_IF_ERROR(check_index(index, infos.size(), "input"));
    Result<Shape> shape = read_dims(dims, rank);
    if (!shape.is_ok()) return shape.status().with_context("input '" + infos[index].name + "'");
    TSR_RETURN_IF_ERROR(check_declared(infos[index], shape.value()));
    tsr_session::Input& in = session->inputs[index];
    if (in.bound && in.shape != shape.value()) {
      in.bound = false;  // the bound buffer has another shape: it no longer fits
      in.data = nullptr;
    }
    in.shape = std::move(shape).value();
    in.has_shape = true;
    return prepare_if_complete(*session);
  });
}

tsr_status tsr_session_set_input(tsr_session* session, size_t index, tsr_dtype dtype, const int64_t* dims,
                                 size_t rank, const void* data, size_t bytes) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(session);
    const auto& infos = session->session->inputs();
    TSR_RETURN_IF_ERROR(check_index(index, infos.size(), "input"));
    const TensorInfo& info = infos[index];
    TSR_RETURN_IF_ERROR(check_dtype(dtype));
    if (static_cast<DType>(dtype) != info.dtype)
      return tessera::invalid_argument("input '" + info.name + "' has dtype " + tessera::dtype_name(info.dtype) + "; " +
                                       tessera::dtype_name(static_cast<DType>(dtype)) + " was given");
    Result<Shape> shape = read_dims(dims, rank);
    if (!shape.is_ok()) return shape.status().with_context("input '" + info.name + "'");
    TSR_RETURN_IF_ERROR(check_declared(info, shape.value()));
    TSR_ASSIGN_OR_RETURN(int64_t numel, tessera::shape_numel(shape.value()));
    size_t need = static_cast<size_t>(numel) * tessera::dtype_size(info.dtype);
    if (bytes != need)
      return tessera::invalid_argument("input '" + info.name + "' needs " + std::to_string(need) + " bytes (" +
                                       tessera::dtype_name(info.dtype) + tessera::shape_to_string(shape.value()) +
                                       "); " + std::to_string(bytes) + " were given");
    if (need > 0 && !data) return tessera::invalid_argument("input '" + info.name + "': 'data' is null");
    tsr_session::Input& in = session->inputs[index];
    in.shape = std::move(shape).value();
    in.has_shape = true;
    in.bound = true;
    in.data = data;
    return Status::ok();
  });
}

tsr_status tsr_session_set_output_buffer(tsr_session* session, size_t index, void* data, size_t bytes) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(session);
    TSR_RETURN_IF_ERROR(check_index(index, session->bindings.size(), "output"));
    if (data && bytes == 0)
      return tessera::invalid_argument("output '" + session->session->outputs()[index].name +
                                       "': 'bytes' is 0 for a non-null buffer");
    session->bindings[index].data = data;
    session->bindings[index].capacity = data ? bytes : 0;
    return Status::ok();
  });
}

tsr_status tsr_session_run(tsr_session* session) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(session);
    // One session must not run on two threads at once (tessera.h); a second run while one
    // is in progress would race on the outputs below (a double free), so it is refused.
    if (session->running.exchange(true, std::memory_order_acquire))
      return tessera::invalid_argument(
          "the session is already running on another thread: one session must not be used by two threads at once");
    struct Done {
      std::atomic<bool>& f;
      ~Done() { f.store(false, std::memory_order_release); }
    } done{session->running};
    session->have_outputs = false;
    session->outputs.clear();
    const auto& infos = session->session->inputs();
    std::vector<std::pair<std::string, Tensor>> inputs;
    for (size_t k = 0; k < infos.size(); ++k) {
      const tsr_session::Input& in = session->inputs[k];
      if (!in.bound)
        return tessera::invalid_argument("input '" + infos[k].name + "' has not been set: call tsr_session_set_input");
      inputs.emplace_back(infos[k].name, Tensor::wrap(infos[k].dtype, in.shape, const_cast<void*>(in.data)));
    }
    TSR_ASSIGN_OR_RETURN(session->outputs, session->session->run(inputs, session->bindings));
    session->have_outputs = true;
    return Status::ok();
  });
}

tsr_status tsr_session_output_shape(tsr_session* session, size_t index, int64_t* dims, size_t capacity,
                                    int32_t* rank) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(session);
    const auto& infos = session->session->outputs();
    TSR_RETURN_IF_ERROR(check_index(index, infos.size(), "output"));
    if (session->have_outputs) return write_shape(session->outputs[index].shape(), true, dims, capacity, rank);
    std::vector<Shape> shapes;
    if (all_input_shapes(*session, &shapes)) {
      Status st = session->session->prepare(shapes);
      if (st.is_ok()) {
        TSR_ASSIGN_OR_RETURN(std::vector<Shape> outs, session->session->planned_output_shapes());
        return write_shape(outs[index], true, dims, capacity, rank);
      }
      if (!tessera::needs_input_values(st)) return st;
    }
    return declared_shape(infos[index], dims, capacity, rank);
  });
}

tsr_status tsr_session_output_data(const tsr_session* session, size_t index, const void** data, size_t* bytes) {
  return guard(__func__, [&]() -> Status {
    TSR_C_NONNULL(session);
    TSR_C_NONNULL(data);
    TSR_C_NONNULL(bytes);
    TSR_RETURN_IF_ERROR(check_index(index, session->session->outputs().size(), "output"));
    if (!session->have_outputs)
      return tessera::invalid_argument("no outputs: the session has no successful tsr_session_run yet");
    *data = session->outputs[index].data();
    *bytes = session->outputs[index].nbytes();
    return Status::ok();
  });
}

}  // extern "C"
