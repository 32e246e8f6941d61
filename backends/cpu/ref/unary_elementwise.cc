// Reference kernels for the unary math ops and activations (see
// runtime/ops/unary_elementwise.cc for the ONNX versions). Float ops compute in double and
// round once to the tensor dtype, so they are at least as accurate as any float kernel.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/ref/ref_kernels.h"
#include "tessera/half.h"

namespace tessera::ref {

namespace {

/// y = f(x) for float/double tensors, f: double -> double.
template <typename F>
Result<std::unique_ptr<Kernel>> make_float_unary(F f) {
  return make_fn_kernel([f](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    if (x.dtype() == DType::kFloat32) {
      const float* px = x.data_as<float>();
      float* py = y.data_as<float>();
      for (int64_t i = 0; i < x.numel(); ++i) py[i] = static_cast<float>(f(static_cast<double>(px[i])));
      return Status::ok();
    }
    if (x.dtype() == DType::kFloat64) {
      const double* px = x.data_as<double>();
      double* py = y.data_as<double>();
      for (int64_t i = 0; i < x.numel(); ++i) py[i] = f(px[i]);
      return Status::ok();
    }
    return unimplemented(std::string("dtype ") + dtype_name(x.dtype()) + " is not supported (float or double only)");
  });
}

/// y = f(x) for every numeric dtype, f a generic callable T -> T.
template <typename F>
Result<std::unique_ptr<Kernel>> make_numeric_unary(F f) {
  return make_fn_kernel([f](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    Tensor& y = k.output(0);
    return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        return unimplemented("bool is not supported by this op");
      } else {
        const T* px = x.data_as<T>();
        T* py = y.data_as<T>();
        for (int64_t i = 0; i < x.numel(); ++i) py[i] = static_cast<T>(f(px[i]));
        return Status::ok();
      }
    });
  });
}

/// Two's-complement negation without signed-overflow UB (-INT_MIN wraps to INT_MIN).
template <typename T>
T wrap_neg(T x) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U(0) - static_cast<U>(x));
  } else {
    return -x;
  }
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

// Relu: y = max(0, x); NaN stays NaN (as numpy.maximum and onnxruntime).
Result<std::unique_ptr<Kernel>> make_Relu(const CompileContext&) {
  return make_numeric_unary([](auto x) { return x < decltype(x)(0) ? decltype(x)(0) : x; });
}
// LeakyRelu: y = x >= 0 ? x : alpha * x.
Result<std::unique_ptr<Kernel>> make_LeakyRelu(const CompileContext& ctx) {
  const double alpha = ctx.node.attr_f("alpha", 0.01f);
  return make_float_unary([alpha](double x) { return x >= 0 ? x : alpha * x; });
}
// Elu: y = x >= 0 ? x : alpha * (exp(x) - 1).
Result<std::unique_ptr<Kernel>> make_Elu(const CompileContext& ctx) {
  const double alpha = ctx.node.attr_f("alpha", 1.0f);
  return make_float_unary([alpha](double x) { return x >= 0 ? x : alpha * std::expm1(x); });
}
// Selu: y = gamma * (x > 0 ? x : alpha * (exp(x) - 1)).
Result<std::unique_ptr<Kernel>> make_Selu(const CompileContext& ctx) {
  const double alpha = ctx.node.attr_f("alpha", 1.67326319217681884765625f);
  const double gamma = ctx.node.attr_f("gamma", 1.05070102214813232421875f);
  return make_float_unary([alpha, gamma](double x) { return gamma * (x > 0 ? x : alpha * std::expm1(x)); });
}
// Sigmoid: y = 1 / (1 + exp(-x)).
Result<std::unique_ptr<Kernel>> make_Sigmoid(const CompileContext&) { return make_float_unary(sigmoid); }
// HardSigmoid: y = max(0, min(1, alpha * x + beta)).
Result<std::unique_ptr<Kernel>> make_HardSigmoid(const CompileContext& ctx) {
  const double alpha = ctx.node.attr_f("alpha", 0.2f);
  const double beta = ctx.node.attr_f("beta", 0.5f);
  return make_float_unary([alpha, beta](double x) { return std::fmax(0.0, std::fmin(1.0, alpha * x + beta)); });
}
// HardSwish: y = x * max(0, min(1, x / 6 + 1/2)).
Result<std::unique_ptr<Kernel>> make_HardSwish(const CompileContext&) {
  return make_float_unary([](double x) { return x * std::fmax(0.0, std::fmin(1.0, x / 6.0 + 0.5)); });
}
Result<std::unique_ptr<Kernel>> make_Tanh(const CompileContext&) {
  return make_float_unary([](double x) { return std::tanh(x); });
}
// Softplus: y = ln(1 + exp(x)), evaluated as max(x, 0) + ln(1 + exp(-|x|)) to avoid overflow.
Result<std::unique_ptr<Kernel>> make_Softplus(const CompileContext&) {
  return make_float_unary([](double x) { return std::fmax(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); });
}
// Softsign: y = x / (1 + |x|).
Result<std::unique_ptr<Kernel>> make_Softsign(const CompileContext&) {
  return make_float_unary([](double x) { return x / (1.0 + std::fabs(x)); });
}
// Gelu (opset 20): "none": y = x/2 * (1 + erf(x / sqrt(2)));
// "tanh": y = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
Result<std::unique_ptr<Kernel>> make_Gelu(const CompileContext& ctx) {
  const bool tanh_approx = ctx.node.attr_s("approximate", "none") == "tanh";
  return make_float_unary([tanh_approx](double x) {
    if (tanh_approx) return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  });
}
Result<std::unique_ptr<Kernel>> make_Erf(const CompileContext&) {
  return make_float_unary([](double x) { return std::erf(x); });
}
Result<std::unique_ptr<Kernel>> make_Exp(const CompileContext&) {
  return make_float_unary([](double x) { return std::exp(x); });
}
Result<std::unique_ptr<Kernel>> make_Log(const CompileContext&) {
  return make_float_unary([](double x) { return std::log(x); });
}
Result<std::unique_ptr<Kernel>> make_Sqrt(const CompileContext&) {
  return make_float_unary([](double x) { return std::sqrt(x); });
}
Result<std::unique_ptr<Kernel>> make_Reciprocal(const CompileContext&) {
  return make_float_unary([](double x) { return 1.0 / x; });
}
Result<std::unique_ptr<Kernel>> make_Abs(const CompileContext&) {
  return make_numeric_unary([](auto x) {
    using T = decltype(x);
    if constexpr (std::is_unsigned_v<T>) return x;
    else return x < T(0) ? wrap_neg(x) : x;
  });
}
Result<std::unique_ptr<Kernel>> make_Neg(const CompileContext&) {
  return make_numeric_unary([](auto x) { return wrap_neg(x); });
}
Result<std::unique_ptr<Kernel>> make_Floor(const CompileContext&) {
  return make_float_unary([](double x) { return std::floor(x); });
}
Result<std::unique_ptr<Kernel>> make_Ceil(const CompileContext&) {
  return make_float_unary([](double x) { return std::ceil(x); });
}
// Round: halves go to the nearest even integer (std::nearbyint in the default rounding mode).
Result<std::unique_ptr<Kernel>> make_Round(const CompileContext&) {
  return make_float_unary([](double x) { return std::nearbyint(x); });
}
// Sign: -1, 0 or 1 (NaN stays NaN).
Result<std::unique_ptr<Kernel>> make_Sign(const CompileContext&) {
  return make_numeric_unary([](auto x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x)) return x;
    }
    return x > T(0) ? T(1) : x < T(0) ? static_cast<T>(-1) : T(0);
  });
}
Result<std::unique_ptr<Kernel>> make_Sin(const CompileContext&) {
  return make_float_unary([](double x) { return std::sin(x); });
}
Result<std::unique_ptr<Kernel>> make_Cos(const CompileContext&) {
  return make_float_unary([](double x) { return std::cos(x); });
}
Result<std::unique_ptr<Kernel>> make_Not(const CompileContext&) {
  return make_fn_kernel([](const KernelContext& k) -> Status {
    const bool* px = k.input(0).data_as<bool>();
    bool* py = k.output(0).data_as<bool>();
    for (int64_t i = 0; i < k.input(0).numel(); ++i) py[i] = !px[i];
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> make_Tan(const CompileContext&) {
  return make_float_unary([](double x) { return std::tan(x); });
}
Result<std::unique_ptr<Kernel>> make_Asin(const CompileContext&) {
  return make_float_unary([](double x) { return std::asin(x); });
}
Result<std::unique_ptr<Kernel>> make_Acos(const CompileContext&) {
  return make_float_unary([](double x) { return std::acos(x); });
}
Result<std::unique_ptr<Kernel>> make_Atan(const CompileContext&) {
  return make_float_unary([](double x) { return std::atan(x); });
}
Result<std::unique_ptr<Kernel>> make_Sinh(const CompileContext&) {
  return make_float_unary([](double x) { return std::sinh(x); });
}
Result<std::unique_ptr<Kernel>> make_Cosh(const CompileContext&) {
  return make_float_unary([](double x) { return std::cosh(x); });
}
Result<std::unique_ptr<Kernel>> make_Asinh(const CompileContext&) {
  return make_float_unary([](double x) { return std::asinh(x); });
}
Result<std::unique_ptr<Kernel>> make_Acosh(const CompileContext&) {
  return make_float_unary([](double x) { return std::acosh(x); });
}
Result<std::unique_ptr<Kernel>> make_Atanh(const CompileContext&) {
  return make_float_unary([](double x) { return std::atanh(x); });
}
// ThresholdedRelu (opset 10): y = x > alpha ? x : 0.
Result<std::unique_ptr<Kernel>> make_ThresholdedRelu(const CompileContext& ctx) {
  const double alpha = ctx.node.attr_f("alpha", 1.0f);
  return make_float_unary([alpha](double x) { return x > alpha ? x : 0.0; });
}
// Celu (opset 12): y = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
Result<std::unique_ptr<Kernel>> make_Celu(const CompileContext& ctx) {
  const double alpha = ctx.node.attr_f("alpha", 1.0f);
  return make_float_unary([alpha](double x) { return std::fmax(0.0, x) + std::fmin(0.0, alpha * std::expm1(x / alpha)); });
}
// Mish (opset 18): y = x * tanh(softplus(x)), softplus(x) = ln(1 + exp(x)) evaluated stably.
Result<std::unique_ptr<Kernel>> make_Mish(const CompileContext&) {
  return make_float_unary([](double x) { return x * std::tanh(std::fmax(x, 0.0) + std::log1p(std::exp(-std::fabs(x)))); });
}
// Shrink (opset 9): y = x < -lambd ? x + bias : x > lambd ? x - bias : 0, computed in double
// and converted back to the input dtype (integers included).
Result<std::unique_ptr<Kernel>> make_Shrink(const CompileContext& ctx) {
  const double lambd = ctx.node.attr_f("lambd", 0.5f);
  const double bias = ctx.node.attr_f("bias", 0.0f);
  return make_numeric_unary([lambd, bias](auto x) {
    using T = decltype(x);
    const double v = static_cast<double>(x);
    const double r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
    if constexpr (std::is_integral_v<T>) {
      if (!(r >= static_cast<double>(std::numeric_limits<T>::lowest()) && r <= static_cast<double>(std::numeric_limits<T>::max())))
        return T(0);
    }
    return static_cast<T>(r);
  });
}
// BitwiseNot (opset 18): y = ~x on integers.
Result<std::unique_ptr<Kernel>> make_BitwiseNot(const CompileContext&) {
  return make_numeric_unary([](auto x) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>) return static_cast<T>(~x);
    else return x;  // not reached: the schema accepts integers only
  });
}

namespace {
/// y = pred(x) for float/double/float16/bfloat16 x, bool y.
template <typename P>
Result<std::unique_ptr<Kernel>> make_float_predicate(P pred) {
  return make_fn_kernel([pred](const KernelContext& k) -> Status {
    const Tensor& x = k.input(0);
    bool* py = k.output(0).data_as<bool>();
    if (x.dtype() == DType::kFloat32) {
      for (int64_t i = 0; i < x.numel(); ++i) py[i] = pred(static_cast<double>(x.data_as<float>()[i]));
      return Status::ok();
    }
    if (x.dtype() == DType::kFloat64) {
      for (int64_t i = 0; i < x.numel(); ++i) py[i] = pred(x.data_as<double>()[i]);
      return Status::ok();
    }
    if (x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16) {
      const bool half = x.dtype() == DType::kFloat16;
      const uint16_t* px = x.data_as<uint16_t>();
      for (int64_t i = 0; i < x.numel(); ++i) py[i] = pred(static_cast<double>(half ? half_to_float(px[i]) : bfloat16_to_float(px[i])));
      return Status::ok();
    }
    return unimplemented(std::string("dtype ") + dtype_name(x.dtype()) + " is not supported (float or double only)");
  });
}
}  // namespace

Result<std::unique_ptr<Kernel>> make_IsNaN(const CompileContext&) {
  return make_float_predicate([](double x) { return std::isnan(x); });
}
// IsInf (opset 10, 20): true for +inf when detect_positive, for -inf when detect_negative.
Result<std::unique_ptr<Kernel>> make_IsInf(const CompileContext& ctx) {
  const bool pos = ctx.node.attr_i("detect_positive", 1) != 0;
  const bool neg = ctx.node.attr_i("detect_negative", 1) != 0;
  return make_float_predicate([pos, neg](double x) { return std::isinf(x) && (x > 0 ? pos : neg); });
}

}  // namespace tessera::ref
