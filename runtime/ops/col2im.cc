// Col2Im (ONNX opset 18): the inverse of im2col. input [N, C * prod(block_shape), L] holds,
// for each of the L sliding-block positions, the block's C * prod(block_shape) values; they
// are summed back into Y [N, C, image_shape...] (overlapping blocks add up). image_shape and
// block_shape (int64 [n], n >= 1 spatial dims, N-d) must be known when planning (the session
// plans small inputs by value); attributes dilations, pads, strides as for Conv.
// col2im_geometry() is shared with the kernel.
#include "runtime/ops/col2im.h"

#include "runtime/ops/op_schema.h"

namespace tessera {

Result<Col2ImGeometry> col2im_geometry(const Node& node, const Shape& input, const std::vector<int64_t>& image_shape,
                                       const std::vector<int64_t>& block_shape) {
  auto err = [&](const std::string& m) { return invalid_argument(node.describe() + ": " + m); };
  if (input.size() != 3) return err("input must be [N, C * prod(block_shape), L], got " + shape_to_string(input));
  const size_t n = image_shape.size();
  if (n == 0) return err("image_shape must hold at least one value");
  if (block_shape.size() != n)
    return err("block_shape has " + std::to_string(block_shape.size()) + " values, image_shape has " + std::to_string(n));
  Col2ImGeometry g;
  g.image = image_shape;
  g.block = block_shape;
  g.dilations = node.attr_ints("dilations", std::vector<int64_t>(n, 1));
  g.strides = node.attr_ints("strides", std::vector<int64_t>(n, 1));
  const std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (g.dilations.size() != n) return err("dilations has " + std::to_string(g.dilations.size()) + " values, expected " + std::to_string(n));
  if (g.strides.size() != n) return err("strides has " + std::to_string(g.strides.size()) + " values, expected " + std::to_string(n));
  if (pads.size() != 2 * n) return err("pads has " + std::to_string(pads.size()) + " values, expected " + std::to_string(2 * n));
  int64_t kernel = 1, count = 1;
  for (size_t d = 0; d < n; ++d) {
    if (g.image[d] < 1) return err("image_shape values must be >= 1, got " + shape_to_string(g.image));
    if (g.block[d] < 1) return err("block_shape values must be >= 1, got " + shape_to_string(g.block));
    if (g.dilations[d] < 1 || g.strides[d] < 1) return err("dilations and strides must be >= 1");
    if (pads[d] < 0 || pads[n + d] < 0) return err("pads must be >= 0");
    g.pads_begin.push_back(pads[d]);
    g.pads_end.push_back(pads[n + d]);
    const int64_t span = g.image[d] + pads[d] + pads[n + d] - g.dilations[d] * (g.block[d] - 1) - 1;
    if (span < 0)
      return err("the dilated block (" + std::to_string(g.dilations[d] * (g.block[d] - 1) + 1) +
                 ") is larger than the padded image in dim " + std::to_string(d));
    g.blocks.push_back(span / g.strides[d] + 1);
    if (kernel > (int64_t{1} << 40) / g.block[d] || count > (int64_t{1} << 40) / g.blocks[d])
      return err("block_shape or image_shape is too large");
    kernel *= g.block[d];
    count *= g.blocks[d];
  }
  if (input[1] % kernel != 0)
    return err("input dim 1 (" + std::to_string(input[1]) + ") is not divisible by prod(block_shape) = " + std::to_string(kernel));
  if (input[2] != count)
    return err("input dim 2 (" + std::to_string(input[2]) + ") must be the number of sliding blocks, " + std::to_string(count));
  g.channels = input[1] / kernel;
  return g;
}

namespace {
Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64)
    return ctx.unsupported(std::string("input dtype ") + dtype_name(x.dtype) + " is not supported (float, double)");
  for (size_t i = 1; i <= 2; ++i)
    if (ctx.input(i).shape.size() != 1)
      return ctx.error(std::string(i == 1 ? "image_shape" : "block_shape") + " must be 1-D, got shape " +
                       shape_to_string(ctx.input(i).shape));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> image, ctx.const_ints(1));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> block, ctx.const_ints(2));
  TSR_ASSIGN_OR_RETURN(Col2ImGeometry g, col2im_geometry(ctx.node(), x.shape, image, block));
  Shape y = {x.shape[0], g.channels};
  y.insert(y.end(), image.begin(), image.end());
  ctx.output(0).dtype = x.dtype;
  ctx.output(0).shape = y;
  return Status::ok();
}
}  // namespace

const OpSchema kSchema_Col2Im = {"Col2Im", 3, 3, 1, 1, infer};

}  // namespace tessera
