// Sharded training checkpoints (issue 9): under ZeRO (stages 1-3) a checkpoint holds every
// rank's shard of each parameter and of its optimizer state as WeightChunks (rectangular
// blocks with global offsets, schema/tessera.fbs WeightChunk), with a DeviceMesh and a
// TensorSharding per parameter describing the layout, as PyTorch's Distributed Checkpoint
// stores DTensor shards (ShardedTensor metadata: chunk offsets and sizes per rank). The
// reader assembles whatever it needs from the chunks, so a checkpoint saved at one world
// size resumes at any other (and in one process).
//
// File layout: rank 0 writes one file (the shards gathered to it, written atomically). A
// sharded parameter is a graph input of static shape there (its data lives only in the
// chunks, so Graph::validate sees it defined and no runtime change is needed);
// assemble_sharded_checkpoint turns it back into an initializer. The optimizer state of
// sharded parameters is in state chunks ("exp_avg", ...); TrainingState keeps the
// optimizer's name and the step. Properties "tessera.zero_stage" and "tessera.world_size"
// record how it was written.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera::train {

/// The part of parameter `param` a rank owns: flat elements [begin, end) of its row-major
/// data (begin <= end).
struct ShardPiece {
  size_t param;
  int64_t begin, end;
};
/// Per rank (index = rank), the pieces it owns, in parameter order.
using ShardLayout = std::vector<std::vector<ShardPiece>>;

/// ZeRO-1's layout (ZeroStage1): the parameters concatenated in order (P elements) and cut
/// into `ranks` chunks of C = ceil(P / ranks) elements; rank r owns [r C, (r + 1) C).
ShardLayout flat_layout(const std::vector<Shape>& shapes, int ranks);
/// FSDP2's layout (ZeRO-2/3, ShardedDataParallel): each parameter is split along dim 0 by
/// split_rows (contiguous rows, the first d0 % ranks ranks one row more); a 0-d parameter
/// belongs to rank 0.
ShardLayout dim0_layout(const std::vector<Shape>& shapes, int ranks);

/// A rectangular block of a tensor: offset and extent per dim.
struct Block {
  std::vector<int64_t> offset;
  Shape extent;
};
/// The flat range [begin, end) of a row-major tensor of `shape` as rectangular blocks, in
/// order: a partial leading row, whole rows, a partial trailing row, recursively (at most
/// 2 rank - 1 blocks). Empty for begin >= end.
std::vector<Block> flat_range_blocks(const Shape& shape, int64_t begin, int64_t end);

/// Turns a full checkpoint (Trainer::snapshot(): weights as initializers, optimizer state
/// in TrainingState) into a sharded one: for every name in `params` (float32 initializers)
/// and every rank r of `layout`, the blocks of r's piece become WeightChunks of the weight
/// and of each of its state tensors; a mesh "zero" (one dim "dp" of layout.size() ranks,
/// role kFsdp for stage >= 2, else kData) appended to the model's meshes (its index in
/// property "tessera.zero_mesh"), and one TensorSharding on it per parameter (Split(0) for
/// stage >= 2, Broadcast for stage 1 whose ranks hold whole weights during a step); the
/// model's other meshes and shardings are kept.
/// Errors: kInvalidArgument for a name that is not a float32 initializer, or a layout
/// whose pieces lie outside their parameter.
Status shard_checkpoint(Model& m, const std::vector<std::string>& params, const ShardLayout& layout, int zero_stage);

/// The inverse, run on every rank after reading a checkpoint (a no-op when it has no
/// chunks): every value with weight chunks gets its initializer back (global shape from
/// its TensorSharding), the state chunks become TrainingState entries, and the chunks, the
/// ZeRO mesh with its shardings (other meshes renumbered) and the properties are dropped,
/// so the model is a plain checkpoint. Errors (kInvalidArgument, naming the parameter): a sharded parameter with
/// no chunks, chunks that do not cover it (the first missing element is named) or cover an
/// element twice, a non-float32 chunk, a state whose chunks cover a tensor but no weight.
Status assemble_sharded_checkpoint(Model& m);

/// XXH3-64 of the model's sharding metadata: meshes, shardings, and each chunk's value,
/// state, offsets, shape and data bytes (the hash check that every rank loaded the same
/// chunks). 0 for a model without any.
uint64_t sharding_hash(const Model& m);

}  // namespace tessera::train
