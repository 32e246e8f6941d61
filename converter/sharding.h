// `tessera convert --shard tp=N`: annotates a converted model for tensor parallelism
// (Megatron-LM, Shoeybi et al. 2019, "Megatron-LM: Training Multi-Billion Parameter
// Language Models Using Model Parallelism", section 3) with a DeviceMesh of one tensor dim
// of N ranks and TensorShardings (SBP placements) of the weights it cuts:
//
//   MLP block: a MatMul/Gemm (weight an initializer [K, F], or [F, K] for Gemm transB=1)
//   whose output reaches a second MatMul/Gemm only through elementwise ops (Gelu, Relu,
//   Erf, Add of a bias [F], Mul/Div by scalar constants, ...) is a column-parallel then
//   row-parallel pair:
//     first weight  Split on its output dim,  its bias [F] Split(0);
//     second weight Split on its input dim,   the second product Partial(sum),
//     its bias      Broadcast (added once, after the all-reduce; a Gemm's C likewise,
//                   so a Gemm with C has no Partial output to annotate).
//
//   Attention block: Q, K and V MatMul/Gemm reading one input (column parallel, each
//   weight Split on its output dim, biases Split(0)), whose outputs reach the output
//   projection (row parallel, as above) only through bias Adds, Reshapes into
//   (heads, head size) and back, Transposes, scaling, Softmax and the two batched
//   products: each rank takes heads/N whole heads. The head count must divide by N; the
//   Reshape shape constants keep the global counts in the file, and the training side
//   gives each rank a per-rank copy (train/tensor_parallel.h).
//
//   Embedding: a Gather (axis 0) of a [V, H] initializer table that nothing else reads
//   becomes vocab-parallel: the table Split(0) (V must divide by N), the Gather's output
//   Partial(sum) (each rank gives the rows of the ids it holds, zeros for the others).
//
// The training side (train/tensor_parallel.h) derives the activations' placements and the
// collectives.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"

namespace tessera {

struct ShardReport {
  int pairs = 0;                   // column/row parallel blocks annotated (MLP and attention)
  int attention = 0;               // of which attention blocks
  int embeddings = 0;              // vocab-parallel embedding tables
  std::vector<std::string> lines;  // one per annotated tensor: "fc1.w [8,16]: S(1)  (column parallel, MatMul 'fc1')"
};

/// Parses "tp=N" (N an integer in [1, 65536]). Errors: kInvalidArgument naming the text.
Result<int> parse_shard_spec(const std::string& text);

/// Annotates `model` (its main graph) for `tp` tensor-parallel ranks as above: appends one
/// DeviceMesh ("tp", shape [tp], role Tensor) and the TensorShardings. Errors
/// (kInvalidArgument): the model already has sharding annotations; a pair whose hidden
/// size F `tp` does not divide (naming the node and F); no pair found (naming what was
/// looked for).
Status annotate_tensor_parallel(Model& model, int tp, ShardReport* report);

}  // namespace tessera
