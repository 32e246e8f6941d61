// Boxing: turning a value laid out one way over a mesh dim into another layout (SBP:
// Split / Broadcast / Partial, as in OneFlow, Yuan et al. 2021, "OneFlow: Redesign the
// Distributed Deep Learning Framework from Scratch", section 3, and PyTorch DTensor's
// redistribute) by a collective inserted into the graph as a node.
//
//   producer -> consumer          collective (node op, domain tessera.train)
//   Partial  -> Broadcast         all-reduce            AllReduce
//   Partial  -> Split(d)          reduce-scatter        ReduceScatter(axis=d)
//   Split(d) -> Broadcast         all-gather            AllGather(axis=d)
//   Split(i) -> Split(j)          all-to-all            AllToAll(axis=i, to_axis=j)
//   Broadcast-> Split(d)          local slice           ShardSlice(axis=d)
//   Broadcast-> (read by a rank-local op whose output is Split or Partial)
//                                 identity forward      CopyToParallel
//
// plan_boxing() works one mesh dim at a time: for a value with one placement per mesh dim
// it returns one step per dim whose placement changes.
//
// Gradients (train/grad_rules via register_collective_grads). The cotangent of a value has
// the value's placement when that is Broadcast or Split, and is Broadcast (every rank holds
// the whole cotangent) for a Partial value, since d(sum_r x_r)/d x_r = I. Under this
// convention the transposes are Megatron-LM's f/g pair (Shoeybi et al. 2019, section 3,
// figure 3) and their generalizations:
//   AllReduce      <-> Identity        (g: all-reduce forward, identity backward)
//   CopyToParallel <-> AllReduce       (f: identity forward, all-reduce backward: the
//                                       rank-local op gives each rank a partial cotangent)
//   AllGather(d)   <-> ShardSlice(d)   (gather_from_tensor_model_parallel_region)
//   ShardSlice(d)  <-> AllGather(d)    (scatter_to_tensor_model_parallel_region)
//   ReduceScatter(d) <-> AllGather(d)
//   AllToAll(i->j) <-> AllToAll(j->i)
//
// Vocab-parallel embedding (Megatron-LM's VocabParallelEmbedding, Shoeybi et al. 2019,
// section 3): VocabParallelGather(table_local [V_r, H], ids int64/int32 [...]; mesh_dim,
// vocab = V) gives [..., H] with the rows of the ids this rank's slice of the [V, H] table
// holds (split_rows slices over the mesh dim's ranks) and zeros for the others: a
// Partial(sum) value. Its gradient VocabParallelGatherGrad(dy, ids) scatter-adds dy's rows
// into this rank's slice; ids get none. Ids outside [-V, V) fail naming the id.
//
// The nodes carry the attribute `mesh_dim` (int): the communicator they run on is the one
// registered for that mesh dim in this process (set_mesh_communicator); split sizes follow
// split_rows (the first size % parts slices one longer), the communicator's rank picks the
// slice. Kernels take float32 and float64 tensors; uneven splits are padded to the longest
// slice on the wire (so CommStats count the padded bytes).
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "train/comm/comm.h"

namespace tessera::train {

/// The collectives of the boxing table.
enum class Collective { kNone, kAllReduce, kReduceScatter, kAllGather, kAllToAll, kSlice, kCopyToParallel };

/// "AllReduce", "ReduceScatter", ... (the node op type), "none".
const char* collective_op_type(Collective c);

/// One boxing step on one mesh dim: `op` turns placement `from` into `to`. axis: the
/// tensor dim split before (AllGather, AllToAll) or after (ReduceScatter, ShardSlice);
/// to_axis: AllToAll's new split dim. Dims may be negative (from the end, numpy style).
struct BoxingStep {
  int mesh_dim = 0;
  Collective op = Collective::kNone;
  int axis = 0, to_axis = 0;
};

/// The collective that turns `from` into `to` on one mesh dim (the table above; kNone when
/// they are equal). Errors: kInvalidArgument for conversions no collective makes (into a
/// Partial placement: Broadcast->Partial and Split->Partial need no communication in
/// principle, but no model this module cuts needs them) and for Partial with a reduction
/// other than sum.
Result<BoxingStep> plan_boxing(const Placement& from, const Placement& to);

/// One step per mesh dim whose placement differs, in mesh-dim order. from and to: one
/// placement per mesh dim (same count). Errors: those of plan_boxing, naming the mesh dim.
Result<std::vector<BoxingStep>> plan_boxing(const std::vector<Placement>& from, const std::vector<Placement>& to);

/// The collective whose node is the gradient of `c`'s node (the transposes above; kNone
/// for AllReduce, whose gradient is an ONNX Identity).
Collective transpose_collective(Collective c);

/// Appends to `g` the node of `step` reading value `in` and returns its output (a new
/// value named `<in>/<op>` made unique, dtype of `in`). `name` names the node.
int add_boxing_node(Graph& g, int in, const BoxingStep& step, const std::string& name);

/// Slice `index` of `parts` of x along `axis` (split_rows sizes; axis may be negative), a
/// new tensor. Errors: kInvalidArgument for a bad axis or index.
Result<Tensor> shard_slice(const Tensor& x, int axis, int parts, int index);

/// The concatenation along `axis` of every rank's x (the ranks' tensors may differ in
/// length along axis only): collective over `comm`; the lengths are exchanged first (one
/// int64 per rank), slices are padded to the longest on the wire. float32/float64/int64.
/// Errors: the communicator's.
Result<Tensor> all_gather_tensor(Communicator& comm, const Tensor& x, int axis);

/// Registers the communicator the collective nodes with attribute mesh_dim = `mesh_dim`
/// run on in this process (not owned; nullptr unregisters). Not thread safe: set it before
/// running graphs.
void set_mesh_communicator(int mesh_dim, Communicator* comm);
/// The communicator of `mesh_dim`, or nullptr.
Communicator* mesh_communicator(int mesh_dim);

/// Bytes of the tensors the AllReduce kernels of `mesh_dim` have reduced in this process
/// (the payload, not what the ring sends), since the communicator was registered: with N
/// ranks the bandwidth-optimal ring sends 2 (N-1)/N times this (Patarasuk & Yuan 2009), the
/// theory a run prints next to what its communicator counted.
uint64_t mesh_all_reduce_payload_bytes(int mesh_dim);

}  // namespace tessera::train
