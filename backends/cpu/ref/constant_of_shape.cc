// ConstantOfShape reference kernel (runtime/ops/constant_of_shape.cc): every element of the
// output is the attribute's single value (default float 0).
#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

Result<std::unique_ptr<Kernel>> make_ConstantOfShape(const CompileContext& ctx) {
  std::shared_ptr<const Tensor> value;
  if (const Attribute* a = ctx.node.find_attr("value"); a && a->type == AttrType::kTensor && a->t) value = a->t;
  if (value && (value->numel() != 1 || value->dtype() != ctx.outputs[0].dtype))
    return ctx.error("attribute value must be one element of the output dtype");
  return make_fn_kernel([value](const KernelContext& k) -> Status {
    Tensor& y = k.output(0);
    if (!value) {  // float 0: the output starts as arbitrary arena bytes, so write it
      if (y.nbytes()) std::memset(y.data(), 0, y.nbytes());
      return Status::ok();
    }
    return dispatch_bytes(dtype_size(y.dtype()), [&](auto tag) -> Status {
      using W = decltype(tag);
      W v;
      std::memcpy(&v, value->data(), sizeof(W));
      W* py = y.data_as<W>();
      for (int64_t i = 0; i < y.numel(); ++i) py[i] = v;
      return Status::ok();
    });
  });
}

}  // namespace tessera::ref
