// tessera-finetune --parallel pp=P[,dp=D] --micro-batches M --schedule gpipe|1f1b: the
// training loop of pipeline parallelism (train/pipeline.h) on a (pipeline, data) mesh
// (train/mesh.h, rank = pp_index * D + dp_index).
//
// The model is cut into P stages (the file's Node::pipeline_stage, else
// converter/pipeline_stages.h cuts it at load, balancing parameter bytes); rank r trains
// stage pp_index on the rows split_rows(B, D, dp_index) of each global batch of B rows, in
// M micro-batches; with D > 1 the gradients are summed over the dp communicator after the
// last micro-batch; each stage applies the optimizer to its parameters. Checkpoints and
// the output model gather every stage's weights and optimizer state to rank 0, which writes
// one normal .tsr (atomically) that `tessera run` runs and --resume continues at any
// layout. Per step, the metrics hold every rank's bytes sent on the pp communicator, the
// theory, and the peak number of micro-batches whose activations it held.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/tensor.h"
#include "train/comm/comm.h"
#include "train/mesh.h"
#include "train/trainer.h"

namespace tessera::finetune {

struct PipelineRunOptions {
  train::ParallelSpec spec;
  int micro_batches = 1;
  std::string schedule = "1f1b";
  int epochs = 1;
  int64_t batch = 32, max_steps = -1, ckpt_every = 0, warmup = 0;
  double lr = 0.01;
  bool cosine = false, quiet = false, ce = true;
  uint64_t seed = 0;
  std::string out_path, metrics_path, ckpt_path;
  train::TrainerConfig cfg;
  /// Rows idx[b0, b1) of a tensor (main.cc's gather_rows) and the row order of an epoch
  /// (epoch_order), so the pipeline sees the same batches as one process.
  std::function<Tensor(const Tensor&, const std::vector<int64_t>&, size_t, size_t)> gather_rows;
  std::function<std::vector<int64_t>(int64_t, uint64_t, int64_t)> epoch_order;
};

/// Runs the training; every rank of `world` (size P * D) calls it with the same model and
/// data (x [N, ...] float32, y [N] int64 or float32). Returns the exit status: 0, 1 on an
/// error (a model that cannot be cut into P non-empty stages, a dead peer: the message names
/// the rank and why; failures in the middle of a step end the job through MPI_Abort).
int run_pipeline(const PipelineRunOptions& o, const Model& model, const Tensor& train_x, const Tensor& train_y,
                 const Tensor& val_x, const Tensor& val_y, train::Communicator& world, train::Communicator& ctrl);

}  // namespace tessera::finetune
