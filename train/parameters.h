// Which initializers training updates: one rule for single-process training (Trainer) and
// each pipeline stage (train/pipeline.h), so a pipeline trains exactly the parameters one
// process trains.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"

namespace tessera::train {

/// The trainable parameters of `g`: float32 initializers of more than one element that
/// nodes read, except BatchNormalization's running statistics (inputs 3, 4) and the
/// non-data inputs of Clip, Pow, Dropout and Reshape, and except those whose name the
/// ECMAScript regex `freeze` finds (std::regex_search; appended to *frozen when given).
/// `stage_nodes`, when given (one flag per node of g), keeps only the parameters those
/// nodes read; the exclusions still look at every node. Names in value-index order.
/// Errors: kInvalidArgument for a bad `freeze` regex, naming it.
Result<std::vector<std::string>> trainable_parameters(const Graph& g, const std::string& freeze,
                                                      std::vector<std::string>* frozen = nullptr,
                                                      const std::vector<bool>* stage_nodes = nullptr);

}  // namespace tessera::train
