// Which initializers training updates: one rule for single-process training (Trainer) and
// each pipeline stage (train/pipeline.h), so a pipeline trains exactly the parameters one
// process trains.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "train/optim.h"

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

/// The value the loss reads: for `loss` "ce" the logits (through trailing Identity ops, the
/// input of a final Softmax/LogSoftmax, whose op type goes to *skipped when given; "" when
/// there is none), else the model output. -1 for a graph without outputs. One rule for
/// Trainer and every pipeline stage, so both train against the same value.
int loss_input(const Graph& g, const std::string& loss, std::string* skipped = nullptr);

/// Appends to `tg` the target input "tessera.train.target" (int64 [N] class indices for
/// "ce", float32 shaped like `pred` for "mse"; its name goes to *target) and the loss node
/// "tessera.train.loss" (domain kTrainOpDomain: SoftmaxCrossEntropy(pred, target) with
/// attribute label_smoothing in [0, 1) for "ce", MSELoss(pred, target) otherwise), a float32
/// scalar, the mean over the batch. Returns the loss value's index. `pred` is a value of tg.
int append_loss_node(Graph& tg, const std::string& loss, double label_smoothing, int pred, std::string* target);

/// Sets the int attribute `name` of n to v: the attribute of that name when n has one (its
/// type becomes int), else a new one appended.
void set_int_attribute(Node& n, const std::string& name, int64_t v);

/// Training mode for every ONNX-domain Dropout of g (training_mode = 1, ONNX Dropout-13:
/// it drops with its ratio and scales the kept values by 1 / (1 - ratio)). Trainer and every
/// pipeline stage train with this; their evaluation graphs keep the inference mode.
void set_dropout_training(Graph& g);

/// True when autodiff made `grad` (a value of tg) with ZerosLike: the loss does not reach
/// that parameter, which is then not trained.
bool zero_gradient(const Graph& tg, const std::string& grad);

/// The parameter `name` of g to train: a copy of its initializer (float32, any shape) and,
/// on resume, the checkpoint's optimizer state tensors for it (model.training; none
/// without), in file order. Errors: kInvalidArgument naming a state tensor that is not
/// float32 of the parameter's shape. `name` must be an initializer of g (trainable_parameters).
Result<Param> param_to_train(const Graph& g, const std::string& name, const Model& model);

/// Resume: kInvalidArgument when the checkpoint (model.training) was trained with another
/// optimizer than `kind`, whose state resuming would discard, or when a parameter's state
/// is not the set `kind` keeps (check_resumed_state in optim.h: a state of another
/// optimizer, a repeated one, or one of AdamW's two without the other); ok otherwise.
Status check_resumed_optimizer(const Model& model, const std::string& kind);

}  // namespace tessera::train
