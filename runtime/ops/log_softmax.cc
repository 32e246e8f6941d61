// LogSoftmax (ONNX opset 1, 11, 13; followed for opsets 7..21):
//   Y = X - max - log(sum(exp(X - max))) along the normalized dims; before opset 13 the
// input is coerced to 2-D at `axis` (default 1), from opset 13 on one axis (default -1);
// see softmax_layout.h. float only.
#include "runtime/ops/op_schema.h"
#include "runtime/ops/softmax_layout.h"

namespace tessera {

const OpSchema kSchema_LogSoftmax = {"LogSoftmax", 1, 1, 1, 1, infer_softmax_family};

}  // namespace tessera
