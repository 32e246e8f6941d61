// Internal helpers of the training module's reference kernels (train/kernels_*.cc): the
// kernel table the interpreter dispatches on, dtype dispatch (float32 and float64 for every
// differentiable op, so gradients can be checked in float64) and the n-d index helpers.
// Not a public header: only train/*.cc include it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/graph.h"
#include "tessera/tensor.h"

namespace tessera::train {

/// Thrown by kernels on bad input; the interpreter turns it into a Status naming the node.
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What a kernel sees: the node, its inputs (nullptr for an omitted optional input), and the
/// outputs it must fill (one per node output; an omitted output is left undefined).
struct KernelArgs {
  const Node& node;
  const Graph& graph;
  std::vector<const Tensor*> in;
  std::vector<Tensor>& out;
  uint64_t seed;  // for Dropout: the same seed gives the same mask

  const Tensor& x(size_t i) const {
    if (i >= in.size() || !in[i]) throw KernelError("input " + std::to_string(i) + " is missing");
    return *in[i];
  }
  bool has(size_t i) const { return i < in.size() && in[i] != nullptr; }
  bool wants(size_t i) const { return i < node.outputs.size() && node.outputs[i] >= 0; }
  /// The declared dtype of output i (kUndefined when unknown).
  DType out_dtype(size_t i) const {
    return wants(i) ? graph.values[node.outputs[i]].dtype : DType::kUndefined;
  }
};

using KernelFn = void (*)(KernelArgs& a);
/// Key: "domain:op_type" ("" domain = ONNX).
using KernelTable = std::unordered_map<std::string, KernelFn>;

void register_elementwise_kernels(KernelTable& t);
void register_linear_kernels(KernelTable& t);
void register_norm_kernels(KernelTable& t);
void register_shape_kernels(KernelTable& t);
/// The collective nodes of train/boxing.h (AllReduce, AllGather, ...).
void register_collective_kernels(KernelTable& t);
/// The table of every kernel above, built once.
const KernelTable& kernel_table();

/// The domain of the training module's own ops (gradients, losses).
constexpr const char* kTrainDomain = "tessera.train";

// ---- tensors ----
Tensor alloc(DType dt, const Shape& s);
/// A view of `t`'s bytes with another shape of the same element count (no copy).
Tensor reshaped(const Tensor& t, const Shape& s);
int64_t numel_of(const Shape& s);
std::vector<int64_t> strides_of(const Shape& s);
/// Strides (elements) of a tensor of shape `in` broadcast to `out` (numpy rules): 0 on the
/// dims `in` lacks or has as 1. Throws when `in` does not broadcast to `out`.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);
Shape broadcast_shape(const Shape& a, const Shape& b);
/// Reads an int32/int64 tensor as int64s.
std::vector<int64_t> to_ints(const Tensor& t);
Tensor from_ints(const std::vector<int64_t>& v, const Shape& s);
int64_t norm_axis(int64_t axis, int64_t rank);

/// Calls f over every index of `shape` in row-major order with, for each stride vector in
/// `strides`, the element offset: f(out_linear, offs) where offs[k] = sum_i idx_i*strides[k][i].
template <typename F>
void for_each_offset(const Shape& shape, const std::vector<std::vector<int64_t>>& strides, F&& f) {
  const int64_t n = numel_of(shape);
  if (n == 0) return;
  const size_t r = shape.size(), k = strides.size();
  std::vector<int64_t> idx(r, 0), off(k, 0);
  for (int64_t lin = 0; lin < n; ++lin) {
    f(lin, off.data());
    for (size_t d = r; d-- > 0;) {
      ++idx[d];
      for (size_t j = 0; j < k; ++j) off[j] += strides[j][d];
      if (idx[d] < shape[d]) break;
      for (size_t j = 0; j < k; ++j) off[j] -= strides[j][d] * shape[d];
      idx[d] = 0;
    }
  }
}

/// Runs f.template operator()<T>() with T float or double for a float32/float64 dtype.
template <typename F>
void float_dispatch(DType dt, const Node& node, F&& f) {
  if (dt == DType::kFloat32)
    f(float{});
  else if (dt == DType::kFloat64)
    f(double{});
  else
    throw KernelError(std::string("dtype ") + dtype_name(dt) + " is not supported by the training kernels (float, double)");
}

// ---- window geometry of Conv / pools (ONNX Conv-11, MaxPool-12, AveragePool-11) ----
struct Window2d {
  int64_t n, c, ih, iw;        // input
  int64_t oh, ow;              // output
  int64_t kh, kw, sh, sw, dh, dw, pt, pl;  // kernel, strides, dilations, pads (top, left)
};
/// 1-D and 2-D windows (1-D as H = 1). `kernel` is the spatial kernel size; `ceil_mode` for
/// pools. Throws on a rank other than 3 or 4 or a non-positive output size.
Window2d window_2d(const Node& node, const Shape& x, const std::vector<int64_t>& kernel, bool ceil_mode);

}  // namespace tessera::train
