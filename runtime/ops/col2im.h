// Col2Im's shared geometry (runtime/ops/col2im.cc, backends/cpu/ref/col2im.cc).
#pragma once

#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

/// The geometry of Col2Im (ONNX opset 18) over n spatial dims; sizes in elements.
struct Col2ImGeometry {
  std::vector<int64_t> image, block, dilations, strides, pads_begin, pads_end;
  std::vector<int64_t> blocks;  // sliding-block positions per dim (see col2im_geometry)
  int64_t channels = 0;         // C: input dim 1 / prod(block)
};

/// Checks Col2Im node `node` for input [N, C * prod(block_shape), L] and the values of
/// image_shape and block_shape (n >= 1 values each) and returns its geometry, with
///   blocks[d] = (image[d] + pads_begin[d] + pads_end[d] - dilations[d] * (block[d] - 1) - 1)
///               / strides[d] + 1,
/// L == prod(blocks). Attributes dilations and strides (n values >= 1, default 1) and pads
/// (2n values >= 0, default 0). Errors (invalid_argument, naming the node) on a wrong rank or
/// length, a bad attribute, an input dim 1 not divisible by prod(block_shape), a block
/// count < 1 or an L that does not match.
Result<Col2ImGeometry> col2im_geometry(const Node& node, const Shape& input, const std::vector<int64_t>& image_shape,
                                       const std::vector<int64_t>& block_shape);

}  // namespace tessera
