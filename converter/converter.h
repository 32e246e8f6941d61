// The converter: ONNX model -> Graph IR -> optimization passes -> .tsr file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

struct ConvertOptions {
  bool fold_constants = true;    // evaluate nodes whose inputs are all constant
  bool fold_batchnorm = true;    // Conv + BatchNormalization -> Conv
  bool fold_conv_affine = true;  // Conv + constant Mul/Div/Add/Sub (scalar or per channel) -> Conv
  bool fuse_hardswish = true;    // x * Clip(x + 3, 0, 6) / 6 -> HardSwish
  bool fuse_gelu = true;         // 0.5 * x * (1 + Erf(x / sqrt(2))) -> Gelu (opset 20)
  bool remove_dead = true;       // drop nodes and weights no output depends on
  /// Largest tensor (bytes) constant folding may create.
  int64_t max_folded_bytes = int64_t{64} << 20;
};

struct ConvertReport {
  int nodes_in = 0;          // nodes in the ONNX model (all graphs)
  int nodes_out = 0;         // nodes in the converted model (all graphs)
  int functions_expanded = 0;  // ONNX function ops replaced by their function bodies
  int constants_to_weights = 0;
  int folded = 0;
  int batchnorms_folded = 0;
  int conv_affine_folded = 0;  // constant Mul/Div/Add/Sub folded into a Conv
  int hardswish_fused = 0;     // decomposed HardSwish patterns replaced
  int gelu_fused = 0;          // decomposed Gelu patterns replaced
  int dead_removed = 0;
  std::vector<std::string> warnings;
};

/// Reads an ONNX model (protobuf; external data files are read relative to the model's
/// folder) into the Graph IR. Constant nodes become initializers. Errors: kIoError (file),
/// kInvalidFile (not a valid ONNX protobuf, a tensor whose bytes do not match its shape,
/// external data outside the model's folder), kUnimplemented naming the op type, node and
/// opset of every op Tessera cannot run (or a dtype or attribute kind it cannot hold).
Result<std::shared_ptr<Model>> import_onnx(const std::string& path, const ConvertOptions& options,
                                           ConvertReport* report);

/// Runs the passes (constant folding, Conv+BatchNormalization folding, Conv+constant
/// Mul/Div/Add/Sub folding, HardSwish pattern fusion, dead-code removal) in place.
Status optimize_model(Model& model, const ConvertOptions& options, ConvertReport* report);

/// import_onnx + optimize_model + write_tsr_file (temporary file, then rename).
Status convert_onnx_file(const std::string& onnx_path, const std::string& tsr_path, const ConvertOptions& options,
                         ConvertReport* report);

/// Reads a serialized ONNX TensorProto (`.pb`, the format of the ONNX test data sets and
/// onnx_test_runner). Holds any dtype Tessera has, including those .npy lacks (bfloat16,
/// float8, int4: int4/uint4 are unpacked to one element per byte). External data is read
/// relative to the file's folder. Errors: kIoError, kInvalidFile (not a TensorProto, bytes
/// that do not match the shape), kUnimplemented (string or complex dtype).
Result<Tensor> read_onnx_tensor_file(const std::string& path);

/// Writes `t` as a serialized ONNX TensorProto named `name` (raw_data, little-endian;
/// int4/uint4 packed two per byte, low nibble first), atomically (temporary file, rename).
/// Errors: kIoError.
Status write_onnx_tensor_file(const std::string& path, const Tensor& t, const std::string& name);

/// Writes `model` as an ONNX ModelProto to `onnx_path` atomically (temporary file, rename):
/// nodes, attributes, initializers (raw_data), inputs and outputs with their dtypes and
/// shapes, the model's opset imports. Optimizer state of a training checkpoint is left out.
/// Errors: kUnimplemented for ops of the tessera.train domain (not ONNX) or an attribute kind
/// ONNX cannot hold; kIoError when the file cannot be written.
Status export_onnx_file(const Model& model, const std::string& onnx_path);

/// Number of nodes in `g` and all its subgraphs.
int count_nodes(const Graph& g);

}  // namespace tessera
