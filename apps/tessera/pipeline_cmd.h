// `tessera convert --pipeline-stages P`: the pipeline cut of a converted model.
#pragma once

#include <string>

namespace tessera {

/// Cuts the converted model at `tsr_path` into `stages` pipeline stages
/// (converter/pipeline_stages.h: parameter bytes balanced over cut points in topological
/// order), stores the stage of every node (Node::pipeline_stage), rewrites the file
/// atomically and prints the cut. On error (a model that cannot be cut into `stages`
/// non-empty stages) prints the reason, removes the file and returns 1; else 0.
int cmd_pipeline_stages(const std::string& tsr_path, int stages);

}  // namespace tessera
