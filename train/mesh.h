// The parallel layout of a training job: `tessera-finetune --parallel dp=D,tp=T,pp=P` over
// D * T * P ranks, seen as a 3-D device mesh (pipeline, data, tensor) with the tensor dim
// varying fastest (Megatron-LM's order: the ranks of one tensor-parallel group are
// neighbours, so on a cluster they share a node), and one communicator per mesh dim split
// from the world (as OneFlow's placement groups and PyTorch's DeviceMesh).
//
//   rank = (pp_index * D + dp_index) * T + tp_index
#pragma once

#include <memory>
#include <string>

#include "tessera/status.h"
#include "train/comm/comm.h"

namespace tessera::train {

/// Ranks along each mesh dim (each >= 1).
struct ParallelSpec {
  int dp = 1, tp = 1, pp = 1;
  int world_size() const { return dp * tp * pp; }
  /// "dp=2,tp=2,pp=1".
  std::string describe() const;
};

/// Parses "dp=2,tp=2,pp=1": comma-separated key=N in any order, each key (dp, tp, pp) at
/// most once, N an integer in [1, 65536]; keys not given are 1. Errors: kInvalidArgument
/// naming the bad item ("tp=0", "xx=2", a repeated key, an empty string).
Result<ParallelSpec> parse_parallel(const std::string& text);

/// This rank's coordinates on the mesh and the communicators of its mesh dims: `dp` holds
/// the D ranks with this rank's (pp, tp) coordinates, ordered by dp index; `tp` the T ranks
/// with its (pp, dp); `pp` the P ranks with its (dp, tp). A dim of size 1 gets a
/// communicator of one rank.
struct Mesh {
  ParallelSpec spec;
  int rank = 0;                    // in the world
  int dp_index = 0, tp_index = 0, pp_index = 0;
  std::unique_ptr<Communicator> dp, tp, pp;
};

/// Splits `world` (size must equal spec.world_size()) into the three mesh-dim
/// communicators. Collective: every rank of `world` calls it. Errors: kInvalidArgument
/// when the world size differs from the spec's product (naming both and the mpirun -np to
/// use); the communicator's split errors.
Result<Mesh> make_mesh(Communicator& world, const ParallelSpec& spec);

}  // namespace tessera::train
