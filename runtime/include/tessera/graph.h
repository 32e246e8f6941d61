// The Graph IR: the in-memory form of a model that the converter builds from ONNX, the
// .tsr reader builds from a file, the planner plans and (later) autodiff extends with a
// backward graph. Ops and attributes are named exactly as in the ONNX operator spec.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

struct Graph;

/// One dim of a declared shape: a fixed size (value >= 0) or a symbol (value == -1, e.g.
/// "batch"; an empty symbol is an anonymous unknown dim). Resolved when the planner sees
/// concrete input shapes.
struct Dim {
  int64_t value = -1;
  std::string symbol;
  bool is_static() const { return value >= 0; }
};

/// A value (edge) of a graph: a graph input, an initializer, or a node output.
struct Value {
  std::string name;
  DType dtype = DType::kUndefined;
  bool has_shape = false;                       // false: rank unknown
  std::vector<Dim> shape;                       // declared (maybe symbolic) shape
  std::shared_ptr<const Tensor> initializer;    // set for constants (weights)
  bool outer_scope = false;                     // a value of an enclosing graph (subgraphs)
  bool trainable = false;                       // training state: updated by the optimizer
};

/// The ONNX attribute kinds (AttributeProto.AttributeType).
enum class AttrType : int8_t {
  kUndefined = 0, kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kGraph = 5,
  kFloats = 6, kInts = 7, kStrings = 8, kTensors = 9, kGraphs = 10
};

struct Attribute {
  std::string name;
  AttrType type = AttrType::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::shared_ptr<const Tensor> t;
  std::shared_ptr<Graph> g;
  std::vector<std::shared_ptr<Graph>> graphs;
};

/// One operator application. `inputs`/`outputs` index the owning Graph's `values`;
/// an input of -1 is an omitted optional input.
struct Node {
  std::string name;
  std::string op_type;   // "Conv"
  std::string domain;    // "" = ONNX default domain (ai.onnx)
  int opset = 0;         // opset version of `domain` this node follows
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::vector<Attribute> attributes;
  int pipeline_stage = -1;

  const Attribute* find_attr(const std::string& n) const;
  // Typed getters: return `def` when the attribute is absent or has another type.
  int64_t attr_i(const std::string& n, int64_t def) const;
  float attr_f(const std::string& n, float def) const;
  std::string attr_s(const std::string& n, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& n, const std::vector<int64_t>& def = {}) const;
  std::vector<float> attr_floats(const std::string& n, const std::vector<float>& def = {}) const;
  /// "Conv 'conv1'" — how errors name a node.
  std::string describe() const;
  /// Adds to `out` the names of the enclosing-scope values that this node's subgraphs (If
  /// branches, Loop and Scan bodies, at any depth) read: values the node uses besides its
  /// inputs.
  void outer_reads(std::unordered_set<std::string>& out) const;
};

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;   // topologically sorted
  std::vector<int> inputs;   // graph inputs (not initializers)
  std::vector<int> outputs;

  /// Index of the value named `n`, or -1.
  int find_value(const std::string& n) const;
  /// Appends a value (its name must be new in this graph) and returns its index.
  int add_value(Value v);
  /// Rebuilds the name index after values were edited or removed.
  void reindex();
  /// Checks structure: indices in range, names unique, every node input defined before
  /// use (or an input, initializer or outer-scope value), subgraphs recursively. Errors
  /// name the node and value.
  Status validate() const;

 private:
  std::unordered_map<std::string, int> index_;
};

struct ModelMetadata {
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::vector<std::pair<std::string, int64_t>> opset_imports;  // (domain, version)
  std::map<std::string, std::string> properties;
};

/// What a file holds beyond the graph (filled by the .tsr reader; the tables are defined
/// by schema/tessera.fbs and used by the distributed and training modules).
struct ModelExtras {
  size_t meshes = 0;            // device meshes
  size_t tensor_shardings = 0;  // SBP placements of tensors
  size_t weight_chunks = 0;     // pre-sharded weight chunks
  bool training_state = false;  // optimizer state and step
  size_t segments = 0;          // weight / optimizer-state segments
};

/// One optimizer state tensor of a training checkpoint (schema TrainingState.states): it
/// has the dtype and shape of the parameter `value` it belongs to.
struct OptimizerStateTensor {
  std::string value;                   // the parameter: a value of the main graph
  std::string name;                    // "momentum_buffer", "exp_avg", "exp_avg_sq"
  std::shared_ptr<const Tensor> data;
};

/// The training state a checkpoint carries (schema/tessera.fbs TrainingState): the
/// optimizer's name, the number of completed steps, and its per-parameter state tensors.
struct TrainingState {
  std::string optimizer;               // "sgd", "adamw"
  int64_t step = 0;
  std::vector<OptimizerStateTensor> states;
};

// ---- Sharding metadata (schema/tessera.fbs "Sharding"; SBP as in OneFlow, Placement as
// in PyTorch DTensor) ----

/// What a mesh dim is used for.
enum class MeshDimRole : uint8_t { kData = 0, kFsdp = 1, kTensor = 2, kPipeline = 3 };
/// The devices a mesh is made of.
enum class MeshDeviceKind : uint8_t { kCpu = 0, kCuda = 1, kVulkan = 2 };

/// A logical grid of ranks: shape[d] ranks along dim d (product = world size), each dim
/// named and given a role. Rank order is row-major over `shape` (the last dim varies
/// fastest).
struct DeviceMesh {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;   // one per dim (may be empty strings)
  std::vector<MeshDimRole> roles;       // one per dim
  MeshDeviceKind device_kind = MeshDeviceKind::kCpu;
};

/// SBP placement of a tensor on one mesh dim: Broadcast (every rank holds the whole
/// tensor), Split(split_dim) (rank i of the dim holds the i-th of shape[d] contiguous
/// slices along tensor dim split_dim; uneven sizes as in split_rows: the first
/// size % parts slices one longer), Partial(reduce) (each rank holds a partial value;
/// the tensor is their reduction, e.g. the sum).
enum class PlacementKind : uint8_t { kBroadcast = 0, kSplit = 1, kPartial = 2 };
enum class PartialReduce : uint8_t { kSum = 0, kMax = 1, kMin = 2, kProd = 3, kAvg = 4 };
struct Placement {
  PlacementKind kind = PlacementKind::kBroadcast;
  int split_dim = 0;
  PartialReduce reduce = PartialReduce::kSum;
  static Placement broadcast() { return {}; }
  static Placement split(int dim) { return {PlacementKind::kSplit, dim, PartialReduce::kSum}; }
  static Placement partial(PartialReduce r = PartialReduce::kSum) { return {PlacementKind::kPartial, 0, r}; }
  bool operator==(const Placement& o) const {
    return kind == o.kind && (kind != PlacementKind::kSplit || split_dim == o.split_dim) &&
           (kind != PlacementKind::kPartial || reduce == o.reduce);
  }
  /// "B", "S(1)", "P(sum)".
  std::string describe() const;
};

/// How one value of the main graph is laid out over mesh `mesh` (an index into
/// Model::meshes): one placement per mesh dim; global_shape is the whole tensor's shape.
struct TensorSharding {
  std::string value;
  uint32_t mesh = 0;
  std::vector<Placement> placements;
  std::vector<int64_t> global_shape;
};

/// A piece of a weight (state empty) or of one of its optimizer state tensors (state =
/// "exp_avg", ...): the block of the global tensor starting at global_offset (elements per
/// dim) with data->shape(). Sharded checkpoints hold every rank's shard as chunks.
struct WeightChunk {
  std::string value;                    // a value of the main graph
  std::string state;                    // "" = the weight
  std::vector<int64_t> global_offset;   // one per dim of data
  std::shared_ptr<const Tensor> data;
};

/// A whole model: metadata plus the main graph. Constant tensors may point into a file
/// mapping; `storage` keeps that mapping alive.
struct Model {
  ModelMetadata meta;
  Graph graph;
  std::shared_ptr<const void> storage;
  /// Format version of the file this model was read from (0 when built in memory).
  uint32_t format_version = 0;
  ModelExtras extras;
  /// Set for a training checkpoint (written by train/, read back by the .tsr reader).
  std::shared_ptr<const TrainingState> training;
  /// Sharding metadata: meshes, SBP placements of values, pre-sharded chunks (in file
  /// order; the reader checks indices, ranks and that every chunk lies inside its tensor).
  std::vector<DeviceMesh> meshes;
  std::vector<TensorSharding> shardings;
  std::vector<WeightChunk> chunks;
  /// Opset version of `domain` the model imports, or 0.
  int64_t opset(const std::string& domain = "") const;
};

}  // namespace tessera
