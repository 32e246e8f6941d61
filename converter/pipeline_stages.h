// Pipeline stages: cutting a model's graph into P consecutive stages for pipeline
// parallelism (GPipe, Huang et al. 2019; PipeDream-Flush / 1F1B, Narayanan et al. 2021),
// and the values that cross each cut.
//
// `tessera convert --pipeline-stages P` stores the cut in Node::pipeline_stage;
// `tessera-finetune --parallel pp=P` reads it, or cuts the same way at load when the file
// has none. A stage is a contiguous range of nodes in the graph's topological order.
//
//   auto cut = cut_pipeline(model.graph, 2, {"out"});   // balance parameter bytes
//   apply_pipeline_cut(model.graph, *cut);               // Node::pipeline_stage = stage
//   std::puts(cut->describe(model.graph).c_str());
//
// This file depends only on the Graph IR (no ONNX), so the training app compiles it too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"

namespace tessera {

/// A cut of a graph into `stages` pipeline stages.
struct PipelineCut {
  int stages = 0;
  /// Per node of the graph: its stage in [0, stages).
  std::vector<int> node_stage;
  /// Per stage: bytes of the parameters (float initializers of more than one element) its
  /// nodes read; each initializer counted once, at the stage of its first reader.
  std::vector<int64_t> param_bytes;
  /// boundary[k], k in [0, stages]: the values (indices into Graph::values) stage k
  /// receives from stage k-1 (k = 0: the graph inputs the stages read; k = stages: the
  /// sinks). A value produced in stage a and read in stage b > a + 1 crosses every cut in
  /// between (the stages between relay it). Initializers never cross: each stage holds the
  /// weights it reads.
  std::vector<std::vector<int>> boundary;

  /// One line per stage: "stage 0: nodes 0-2 (fc1 .. ln), 704 parameter bytes, sends h1b
  /// ln" (node and value names from `g`; the last stage sends nothing).
  std::string describe(const Graph& g) const;
};

/// Cuts `g` into `stages` stages over its nodes in topological order, minimizing the
/// largest stage's parameter bytes (linear partition by dynamic programming, O(stages *
/// nodes^2)); among equal cuts, the one with the fewest crossing values. `sinks` are
/// values the last stage must hold (the model output, or the logits a loss reads); empty:
/// the graph outputs. A parameter read by nodes on both sides of a cut point (tied
/// weights) forbids that cut point. Errors: kInvalidArgument when stages < 1, or when the
/// graph cannot be cut into `stages` stages each holding at least one node that reads a
/// parameter (the message says how many such nodes and cut points there are).
Result<PipelineCut> cut_pipeline(const Graph& g, int stages, const std::vector<std::string>& sinks = {});

/// The cut stored in the graph (Node::pipeline_stage), or stages == 0 when no node has a
/// stage. `stages` > 0: the count the caller expects. Errors: kInvalidArgument naming the
/// node when some nodes have a stage and others not, a stage is out of [0, stages), a
/// value flows from a later stage to an earlier one, a stage has no node, a parameter is
/// read in two stages, or the file's stage count differs from `stages`.
Result<PipelineCut> pipeline_cut_from_graph(const Graph& g, int stages, const std::vector<std::string>& sinks = {});

/// Sets Node::pipeline_stage of every node of `g` from `cut`.
void apply_pipeline_cut(Graph& g, const PipelineCut& cut);

}  // namespace tessera
