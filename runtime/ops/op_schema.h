// Op schemas: for each ONNX op, the arity checks and the shape/dtype inference that the
// planner runs once input shapes are known (symbolic dims are concrete by then). One op's
// schema lives in one file under runtime/ops/; the list of ops is runtime/ops/op_list.def.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

/// What the planner knows about a value: its dtype and concrete shape and, when the value
/// is computable at plan time (an initializer, or a shape computation folded by the
/// planner), the value itself.
struct ValueInfo {
  DType dtype = DType::kUndefined;
  Shape shape;
  std::shared_ptr<const Tensor> constant;
};

/// The view of one node that shape inference gets.
class InferContext {
 public:
  InferContext(const Node& node, std::vector<const ValueInfo*> inputs, std::vector<ValueInfo>* outputs)
      : node_(node), inputs_(std::move(inputs)), outputs_(outputs) {}

  const Node& node() const { return node_; }
  size_t num_inputs() const { return inputs_.size(); }
  /// False for an omitted optional input (or an index past the end).
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  const ValueInfo& input(size_t i) const { return *inputs_[i]; }
  size_t num_outputs() const { return outputs_->size(); }
  ValueInfo& output(size_t i) { return (*outputs_)[i]; }

  /// The plan-time value of input `i` as int64s (int32 and int64 inputs are accepted).
  /// Errors, naming the node and input, when the value is not known at plan time.
  Result<std::vector<int64_t>> const_ints(size_t i) const;
  /// The plan-time value of input `i` as floats (float, double, int inputs accepted).
  Result<std::vector<float>> const_floats(size_t i) const;
  /// invalid_argument("<node>: msg").
  Status error(const std::string& msg) const;
  /// unimplemented("<node>: msg").
  Status unsupported(const std::string& msg) const;

 private:
  const Node& node_;
  std::vector<const ValueInfo*> inputs_;
  std::vector<ValueInfo>* outputs_;
};

using InferFn = Status (*)(InferContext& ctx);

/// How the executor treats an op.
enum class OpKind {
  kKernel,        // computed by a backend kernel
  kControlFlow,   // If / Loop / Scan: run by the executor over subgraph plans
};

struct OpSchema {
  const char* op_type;
  int min_inputs;
  int max_inputs;     // -1: variadic
  int min_outputs;
  int max_outputs;
  InferFn infer;
  OpKind kind = OpKind::kKernel;
};

/// Declares kSchema_<Op> for every op of the list.
#define TSR_OP(name) extern const OpSchema kSchema_##name;
#define TSR_CONTROL_OP(name) extern const OpSchema kSchema_##name;
#include "runtime/ops/op_list.def"
#undef TSR_OP
#undef TSR_CONTROL_OP

/// The schema of ONNX-domain op `op_type`, or nullptr if Tessera does not know it.
const OpSchema* find_op_schema(const std::string& domain, const std::string& op_type);
/// Every op of the list, in list order.
const std::vector<const OpSchema*>& all_op_schemas();

/// Checks the node's input/output counts against the schema, then runs its inference.
Status infer_node(const OpSchema& schema, InferContext& ctx);

// ---- helpers shared by schemas ----

/// Numpy-style multidirectional broadcast (ONNX "Broadcasting in ONNX").
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);
/// Normalizes a possibly negative `axis` for a tensor of `rank`; errors if out of range.
Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const Node& node);

}  // namespace tessera
