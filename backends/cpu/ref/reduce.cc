// Reference kernels for ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL2,
// ReduceSumSquare, ReduceL1, ReduceLogSum and ReduceLogSumExp (runtime/ops/reduce.cc).
// ReduceLogSumExp = max + log(sum(exp(x - max))) in double, so large inputs do not overflow. For each output element the kernel walks every
// input element of the reduced axes and accumulates in double (floats) or int64 (integers,
// wrapping), then rounds once to the output dtype.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/ref/ref_util.h"

namespace tessera::ref {

namespace {

enum class Reduction { kSum, kMean, kMax, kMin, kProd, kL2, kSumSquare, kL1, kLogSum, kLogSumExp };

Result<std::unique_ptr<Kernel>> make_reduce(const CompileContext& ctx, Reduction op) {
  TSR_ASSIGN_OR_RETURN(ReduceParams p, resolve_reduce(ctx.node, ctx.input(0).shape, const_inputs_of(ctx)));
  if (p.noop) return make_copy_kernel();
  // Split the input axes into kept (walked by the output index) and reduced ones.
  const Shape& in = ctx.input(0).shape;
  const std::vector<int64_t> strides = contiguous_strides(in);
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
  for (size_t a = 0; a < in.size(); ++a) {
    (p.reduced[a] ? red_dims : kept_dims).push_back(in[a]);
    (p.reduced[a] ? red_strides : kept_strides).push_back(strides[a]);
  }
  int64_t red_count = 1;
  for (int64_t d : red_dims) red_count *= d;
  return make_fn_kernel([=](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        // ReduceMax / ReduceMin over bool (opset 20): any / all; empty gives false / true.
        if (op != Reduction::kMax && op != Reduction::kMin)
          return unimplemented("reductions over bool other than ReduceMax and ReduceMin are not supported");
        const bool* px = x.data_as<bool>();
        bool* py = y.data_as<bool>();
        for (int64_t o = 0; o < y.numel(); ++o) {
          int64_t base = 0, i = o;
          for (size_t j = kept_dims.size(); j-- > 0;) {
            base += (i % kept_dims[j]) * kept_strides[j];
            i /= kept_dims[j];
          }
          bool acc = op == Reduction::kMin;
          for (int64_t r = 0; r < red_count; ++r) {
            int64_t off = 0, q = r;
            for (size_t j = red_dims.size(); j-- > 0;) {
              off += (q % red_dims[j]) * red_strides[j];
              q /= red_dims[j];
            }
            acc = op == Reduction::kMax ? (acc || px[base + off]) : (acc && px[base + off]);
          }
          py[o] = acc;
        }
        return Status::ok();
      } else {
        using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
        const T* px = x.data_as<T>();
        T* py = y.data_as<T>();
        // Offset of the element at linear index `i` of the sub-grid (dims, strides).
        auto offset = [](int64_t i, const std::vector<int64_t>& dims, const std::vector<int64_t>& st) {
          int64_t off = 0;
          for (size_t j = dims.size(); j-- > 0;) {
            off += (i % dims[j]) * st[j];
            i /= dims[j];
          }
          return off;
        };
        auto wrap_add = [](Acc a, Acc b) -> Acc {
          if constexpr (std::is_integral_v<Acc>) return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
          else return a + b;
        };
        auto wrap_mul = [](Acc a, Acc b) -> Acc {
          if constexpr (std::is_integral_v<Acc>) return static_cast<Acc>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
          else return a * b;
        };
        for (int64_t o = 0; o < y.numel(); ++o) {
          const int64_t base = offset(o, kept_dims, kept_strides);
          if (op == Reduction::kLogSumExp) {
            double m = -std::numeric_limits<double>::infinity();
            for (int64_t r = 0; r < red_count; ++r) {
              const double v = static_cast<double>(px[base + offset(r, red_dims, red_strides)]);
              if (std::isnan(v) || v > m) m = v;
              if (std::isnan(m)) break;
            }
            double s = 0;
            if (std::isfinite(m))
              for (int64_t r = 0; r < red_count; ++r)
                s += std::exp(static_cast<double>(px[base + offset(r, red_dims, red_strides)]) - m);
            const double lse = std::isfinite(m) ? m + std::log(s) : m;
            if constexpr (std::is_floating_point_v<T>) py[o] = static_cast<T>(lse);
            else py[o] = std::isfinite(lse) ? static_cast<T>(lse) : T(0);
            continue;
          }
          Acc acc = 0;
          if (op == Reduction::kProd) acc = 1;
          if constexpr (std::is_floating_point_v<T>) {
            if (op == Reduction::kMax) acc = -std::numeric_limits<double>::infinity();
            if (op == Reduction::kMin) acc = std::numeric_limits<double>::infinity();
          } else {
            if (op == Reduction::kMax) acc = static_cast<Acc>(std::numeric_limits<T>::lowest());
            if (op == Reduction::kMin) acc = static_cast<Acc>(std::numeric_limits<T>::max());
          }
          for (int64_t r = 0; r < red_count; ++r) {
            const Acc v = static_cast<Acc>(px[base + offset(r, red_dims, red_strides)]);
            switch (op) {
              case Reduction::kSum: case Reduction::kMean: case Reduction::kLogSum: acc = wrap_add(acc, v); break;
              case Reduction::kL1: acc = wrap_add(acc, v < 0 ? wrap_mul(v, Acc(-1)) : v); break;
              case Reduction::kLogSumExp: break;
              case Reduction::kProd: acc = wrap_mul(acc, v); break;
              case Reduction::kL2: case Reduction::kSumSquare: acc = wrap_add(acc, wrap_mul(v, v)); break;
              case Reduction::kMax:
                if constexpr (std::is_floating_point_v<T>) { if (std::isnan(v) || v > acc) acc = v; }
                else if (v > acc) acc = v;
                break;
              case Reduction::kMin:
                if constexpr (std::is_floating_point_v<T>) { if (std::isnan(v) || v < acc) acc = v; }
                else if (v < acc) acc = v;
                break;
            }
            if constexpr (std::is_floating_point_v<T>) {
              if ((op == Reduction::kMax || op == Reduction::kMin) && std::isnan(acc)) break;
            }
          }
          if (op == Reduction::kMean) {
            if constexpr (std::is_floating_point_v<T>) acc = red_count ? acc / static_cast<double>(red_count) : NAN;
            else acc = red_count ? acc / red_count : 0;
          }
          if (op == Reduction::kL2) acc = static_cast<Acc>(std::sqrt(static_cast<double>(acc)));
          if (op == Reduction::kLogSum) {
            const double l = std::log(static_cast<double>(acc));
            if constexpr (std::is_floating_point_v<T>) acc = l;
            else acc = std::isfinite(l) ? static_cast<Acc>(l) : 0;
          }
          py[o] = static_cast<T>(acc);
        }
        return Status::ok();
      }
    });
  });
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_ReduceSum(const CompileContext& ctx) { return make_reduce(ctx, Reduction::kSum); }
Result<std::unique_ptr<Kernel>> make_ReduceMean(const CompileContext& ctx) { return make_reduce(ctx, Reduction::kMean); }
Result<std::unique_ptr<Kernel>> make_ReduceMax(const CompileContext& ctx) { return make_reduce(ctx, Reduction::kMax); }
Result<std::unique_ptr<Kernel>> make_ReduceMin(const CompileContext& ctx) { return make_reduce(ctx, Reduction::kMin); }
Result<std::unique_ptr<Kernel>> make_ReduceProd(const CompileContext& ctx) { return make_reduce(ctx, Reduction::kProd); }
Result<std::unique_ptr<Kernel>> make_ReduceL2(const CompileContext& ctx) { return make_reduce(ctx, Reduction::kL2); }
Result<std::unique_ptr<Kernel>> make_ReduceSumSquare(const CompileContext& ctx) {
  return make_reduce(ctx, Reduction::kSumSquare);
}
Result<std::unique_ptr<Kernel>> make_ReduceL1(const CompileContext& ctx) { return make_reduce(ctx, Reduction::kL1); }
Result<std::unique_ptr<Kernel>> make_ReduceLogSum(const CompileContext& ctx) { return make_reduce(ctx, Reduction::kLogSum); }
Result<std::unique_ptr<Kernel>> make_ReduceLogSumExp(const CompileContext& ctx) {
  return make_reduce(ctx, Reduction::kLogSumExp);
}

}  // namespace tessera::ref
