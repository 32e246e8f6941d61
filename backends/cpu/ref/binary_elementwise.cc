// Reference kernels for the broadcasting elementwise ops (see runtime/ops/binary_elementwise.cc
// for the ONNX versions followed): Add, Sub, Mul, Div, Pow, Equal, Less, Greater,
// LessOrEqual, GreaterOrEqual, And, Or, Xor, PRelu, Where, Max, Min, Sum, Mean, Mod,
// BitwiseAnd, BitwiseOr, BitwiseXor, BitShift.
// Each output element i reads input k at broadcast_offset(i, out_shape, in_shape_k).
// float16 / bfloat16 inputs (the arithmetic and comparison ops) are widened to float, the op
// is applied in float and the result rounded back to nearest even: for +, -, *, / of two
// halves this is the correctly rounded half result (float's 24-bit significand is more than
// 2 * 11 + 2 bits, so the double rounding is harmless), and Max/Min/compare are exact.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/ref/ref_kernels.h"
#include "backends/cpu/ref/ref_util.h"
#include "tessera/half.h"

namespace tessera::ref {

namespace {

template <typename T>
constexpr bool kIsBool = std::is_same_v<T, bool>;

/// Widening/narrowing of float16 or bfloat16 elements (raw uint16_t bits) through float.
struct HalfCodec {
  bool fp16;  // true: IEEE binary16; false: bfloat16
  float load(uint16_t v) const { return fp16 ? half_to_float(v) : bfloat16_to_float(v); }
  uint16_t store(float f) const { return fp16 ? float_to_half(f) : float_to_bfloat16(f); }
};

bool is_half(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }

/// y[i] = op(float(a[ia]), float(b[ib])) for float16/bfloat16 a and b; a float result is
/// rounded back to the inputs' dtype, a bool result (comparisons) stored as is.
template <typename Op>
Status run_half_binary(const Op& op, const Tensor& a, const Tensor& b, Tensor& y) {
  const HalfCodec h{a.dtype() == DType::kFloat16};
  const uint16_t* pa = a.data_as<uint16_t>();
  const uint16_t* pb = b.data_as<uint16_t>();
  BroadcastIndex ia(y.shape(), a.shape(), a.numel()), ib(y.shape(), b.shape(), b.numel());
  using R = decltype(op(0.0f, 0.0f));
  if constexpr (std::is_same_v<R, bool>) {
    bool* py = y.data_as<bool>();
    for (int64_t i = 0; i < y.numel(); ++i) py[i] = op(h.load(pa[ia(i)]), h.load(pb[ib(i)]));
  } else {
    uint16_t* py = y.data_as<uint16_t>();
    for (int64_t i = 0; i < y.numel(); ++i)
      py[i] = h.store(static_cast<float>(op(h.load(pa[ia(i)]), h.load(pb[ib(i)]))));
  }
  return Status::ok();
}

/// Div's and Mod's check: an integer divisor element of 0 is an error (C++ would trap);
/// floating-point divisors pass (IEEE gives inf/NaN).
template <typename T>
Status check_nonzero_divisor(const T* pb, int64_t n, const char* what) {
  if constexpr (std::is_integral_v<T>) {
    for (int64_t j = 0; j < n; ++j)
      if (pb[j] == 0) return invalid_argument(std::string(what) + " by zero (divisor element " + std::to_string(j) + ")");
  }
  return Status::ok();
}

/// y[i] = op(a[ia], b[ib]) with numpy broadcasting; op is a generic callable (T, T) -> R.
/// `allow_bool` lets bool inputs through (Equal); other ops reject them (the schema does too).
template <typename Op>
Result<std::unique_ptr<Kernel>> make_binary(Op op, bool allow_bool = false) {
  return make_fn_kernel([op, allow_bool](const KernelContext& k) -> Status {
    const Tensor& a = k.input(0);
    const Tensor& b = k.input(1);
    Tensor& y = k.output(0);
    if (is_half(a.dtype())) return run_half_binary(op, a, b, y);
    return dispatch_numeric(a.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if (kIsBool<T> && !allow_bool) return unimplemented("bool inputs are not supported by this op");
      using R = decltype(op(T{}, T{}));
      const T* pa = a.data_as<T>();
      const T* pb = b.data_as<T>();
      R* py = y.data_as<R>();
      BroadcastIndex ia(y.shape(), a.shape(), a.numel()), ib(y.shape(), b.shape(), b.numel());
      for (int64_t i = 0; i < y.numel(); ++i) py[i] = op(pa[ia(i)], pb[ib(i)]);
      return Status::ok();
    });
  });
}

/// Wrapping integer arithmetic (ONNX leaves overflow unspecified; wrapping avoids UB).
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !kIsBool<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return static_cast<T>(a + b);
  }
}
template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !kIsBool<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return static_cast<T>(a - b);
  }
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !kIsBool<T>) {
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return static_cast<T>(a * b);
  }
}

template <typename T>
T max_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? b : a;
}
template <typename T>
T min_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return b < a ? b : a;
}

/// Variadic Max/Min/Sum/Mean: y = fold(op, inputs...) with broadcasting; Mean divides by n.
enum class Fold { kMax, kMin, kSum, kMean };

Result<std::unique_ptr<Kernel>> make_variadic(Fold fold) {
  return make_fn_kernel([fold](const KernelContext& k) -> Status {
    Tensor& y = k.output(0);
    const size_t n = k.inputs.size();
    for (size_t j = 0; j < n; ++j)
      if (!k.has_input(j)) return invalid_argument("variadic input " + std::to_string(j) + " is missing");
    if (is_half(y.dtype())) {
      // Each step rounds to the half dtype, as numpy's float16 `a + b + c` and `sum / n` do.
      const HalfCodec h{y.dtype() == DType::kFloat16};
      uint16_t* py = y.data_as<uint16_t>();
      for (int64_t i = 0; i < y.numel(); ++i) {
        float acc = 0;
        for (size_t j = 0; j < n; ++j) {
          const Tensor& x = k.input(j);
          const int64_t off = x.numel() == 1 ? 0 : x.shape() == y.shape() ? i : broadcast_offset(i, y.shape(), x.shape());
          const float v = h.load(x.data_as<uint16_t>()[off]);
          if (j == 0) acc = v;
          else if (fold == Fold::kMax) acc = max_of(acc, v);
          else if (fold == Fold::kMin) acc = min_of(acc, v);
          else acc = h.load(h.store(acc + v));
        }
        if (fold == Fold::kMean) acc = acc / static_cast<float>(n);
        py[i] = h.store(acc);
      }
      return Status::ok();
    }
    return dispatch_numeric(y.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (kIsBool<T>) {
        return unimplemented("bool inputs are not supported by this op");
      } else {
        T* py = y.data_as<T>();
        for (int64_t i = 0; i < y.numel(); ++i) {
          T acc{};
          for (size_t j = 0; j < n; ++j) {
            const Tensor& x = k.input(j);
            const int64_t off = x.numel() == 1 ? 0 : x.shape() == y.shape() ? i : broadcast_offset(i, y.shape(), x.shape());
            const T v = x.data_as<T>()[off];
            if (j == 0) acc = v;
            else if (fold == Fold::kMax) acc = max_of(acc, v);
            else if (fold == Fold::kMin) acc = min_of(acc, v);
            else acc = wrap_add(acc, v);
          }
          if (fold == Fold::kMean) acc = static_cast<T>(acc / static_cast<T>(n));
          py[i] = acc;
        }
        return Status::ok();
      }
    });
  });
}

/// Integer base to a non-negative integer exponent by repeated squaring (exact, wrapping);
/// a negative exponent gives the truncated real result (0 unless |base| == 1).
template <typename T, typename E>
T int_pow(T base, E e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == static_cast<T>(-1)) return (e % 2 == 0) ? T(1) : static_cast<T>(-1);
    return 0;
  }
  T result = 1;
  uint64_t n = static_cast<uint64_t>(e);
  while (n) {
    if (n & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    n >>= 1;
  }
  return result;
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_Add(const CompileContext&) {
  return make_binary([](auto a, auto b) { return wrap_add(a, b); });
}
Result<std::unique_ptr<Kernel>> make_Sub(const CompileContext&) {
  return make_binary([](auto a, auto b) { return wrap_sub(a, b); });
}
Result<std::unique_ptr<Kernel>> make_Mul(const CompileContext&) {
  return make_binary([](auto a, auto b) { return wrap_mul(a, b); });
}

// Div: integer division truncates toward zero (C++ semantics, as the ONNX spec and
// onnxruntime do). An integer division by zero is an error rather than a trap;
// INT_MIN / -1 wraps to INT_MIN.
Result<std::unique_ptr<Kernel>> make_Div(const CompileContext&) {
  return make_fn_kernel([](const KernelContext& k) -> Status {
    const Tensor& a = k.input(0);
    const Tensor& b = k.input(1);
    Tensor& y = k.output(0);
    if (is_half(a.dtype())) return run_half_binary([](float x, float d) { return x / d; }, a, b, y);
    return dispatch_numeric(a.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (kIsBool<T>) {
        return unimplemented("Div: bool inputs are not supported");
      } else {
        const T* pa = a.data_as<T>();
        const T* pb = b.data_as<T>();
        T* py = y.data_as<T>();
        TSR_RETURN_IF_ERROR(check_nonzero_divisor(pb, b.numel(), "Div: integer division"));
        BroadcastIndex ia(y.shape(), a.shape(), a.numel()), ib(y.shape(), b.shape(), b.numel());
        for (int64_t i = 0; i < y.numel(); ++i) {
          const T x = pa[ia(i)], d = pb[ib(i)];
          if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
            py[i] = d == static_cast<T>(-1) ? wrap_sub(T(0), x) : static_cast<T>(x / d);
          } else {
            py[i] = static_cast<T>(x / d);
          }
        }
        return Status::ok();
      }
    });
  });
}

// Pow: float base -> std::pow in double, rounded to the base dtype; integer base with an
// integer exponent -> exact repeated squaring; integer base with a float exponent ->
// std::pow truncated toward zero (as a float->int Cast would).
Result<std::unique_ptr<Kernel>> make_Pow(const CompileContext&) {
  return make_fn_kernel([](const KernelContext& k) -> Status {
    const Tensor& a = k.input(0);
    const Tensor& b = k.input(1);
    Tensor& y = k.output(0);
    return dispatch_numeric(a.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      return dispatch_numeric(b.dtype(), [&](auto etag) -> Status {
        using E = decltype(etag);
        if constexpr (kIsBool<T> || kIsBool<E>) {
          return unimplemented("Pow: bool inputs are not supported");
        } else {
          const T* pa = a.data_as<T>();
          const E* pb = b.data_as<E>();
          T* py = y.data_as<T>();
          BroadcastIndex ia(y.shape(), a.shape(), a.numel()), ib(y.shape(), b.shape(), b.numel());
          for (int64_t i = 0; i < y.numel(); ++i) {
            const T x = pa[ia(i)];
            const E e = pb[ib(i)];
            if constexpr (std::is_floating_point_v<T>) {
              py[i] = static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(e)));
            } else if constexpr (std::is_integral_v<E>) {
              py[i] = int_pow(x, e);
            } else {
              const double r = std::pow(static_cast<double>(x), static_cast<double>(e));
              py[i] = std::isfinite(r) && r >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
                              r <= static_cast<double>(std::numeric_limits<T>::max())
                          ? static_cast<T>(r)
                          : T(0);
            }
          }
          return Status::ok();
        }
      });
    });
  });
}

Result<std::unique_ptr<Kernel>> make_Equal(const CompileContext&) {
  return make_binary([](auto a, auto b) -> bool { return a == b; }, /*allow_bool=*/true);
}
Result<std::unique_ptr<Kernel>> make_Less(const CompileContext&) {
  return make_binary([](auto a, auto b) -> bool { return a < b; });
}
Result<std::unique_ptr<Kernel>> make_Greater(const CompileContext&) {
  return make_binary([](auto a, auto b) -> bool { return a > b; });
}
Result<std::unique_ptr<Kernel>> make_LessOrEqual(const CompileContext&) {
  return make_binary([](auto a, auto b) -> bool { return a <= b; });
}
Result<std::unique_ptr<Kernel>> make_GreaterOrEqual(const CompileContext&) {
  return make_binary([](auto a, auto b) -> bool { return a >= b; });
}
Result<std::unique_ptr<Kernel>> make_And(const CompileContext&) {
  return make_binary([](auto a, auto b) -> bool { return a && b; }, true);
}
Result<std::unique_ptr<Kernel>> make_Or(const CompileContext&) {
  return make_binary([](auto a, auto b) -> bool { return a || b; }, true);
}
Result<std::unique_ptr<Kernel>> make_Xor(const CompileContext&) {
  return make_binary([](auto a, auto b) -> bool { return static_cast<bool>(a) != static_cast<bool>(b); }, true);
}

// PRelu: y = x < 0 ? slope * x : x, slope broadcast to X.
Result<std::unique_ptr<Kernel>> make_PRelu(const CompileContext&) {
  return make_binary([](auto x, auto slope) {
    using T = decltype(x);
    return x < T(0) ? wrap_mul(slope, x) : x;
  });
}

// Where: y = condition ? X : Y, three-way broadcast; elements copied as opaque words.
Result<std::unique_ptr<Kernel>> make_Where(const CompileContext&) {
  return make_fn_kernel([](const KernelContext& k) -> Status {
    const Tensor& c = k.input(0);
    const Tensor& a = k.input(1);
    const Tensor& b = k.input(2);
    Tensor& y = k.output(0);
    return dispatch_bytes(dtype_size(y.dtype()), [&](auto tag) -> Status {
      using W = decltype(tag);
      const bool* pc = c.data_as<bool>();
      const W* pa = a.data_as<W>();
      const W* pb = b.data_as<W>();
      W* py = y.data_as<W>();
      BroadcastIndex ic(y.shape(), c.shape(), c.numel()), ia(y.shape(), a.shape(), a.numel()),
          ib(y.shape(), b.shape(), b.numel());
      for (int64_t i = 0; i < y.numel(); ++i) py[i] = pc[ic(i)] ? pa[ia(i)] : pb[ib(i)];
      return Status::ok();
    });
  });
}

Result<std::unique_ptr<Kernel>> make_Max(const CompileContext&) { return make_variadic(Fold::kMax); }
Result<std::unique_ptr<Kernel>> make_Min(const CompileContext&) { return make_variadic(Fold::kMin); }
Result<std::unique_ptr<Kernel>> make_Sum(const CompileContext&) { return make_variadic(Fold::kSum); }
Result<std::unique_ptr<Kernel>> make_Mean(const CompileContext&) { return make_variadic(Fold::kMean); }

// Mod: fmod=1: r = a - trunc(a / b) * b (sign of a; std::fmod for floats); fmod=0 (integers):
// r takes b's sign, as Python's %. An integer modulus by zero is an error; x mod -1 is 0.
Result<std::unique_ptr<Kernel>> make_Mod(const CompileContext& ctx) {
  const bool fmod = ctx.node.attr_i("fmod", 0) != 0;
  return make_fn_kernel([fmod](const KernelContext& k) -> Status {
    const Tensor& a = k.input(0);
    const Tensor& b = k.input(1);
    Tensor& y = k.output(0);
    // fmod of two halves is exactly representable as a half, so one float fmod is exact.
    if (is_half(a.dtype())) return run_half_binary([](float x, float d) { return std::fmod(x, d); }, a, b, y);
    return dispatch_numeric(a.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (kIsBool<T>) {
        return unimplemented("Mod: bool inputs are not supported");
      } else {
        const T* pa = a.data_as<T>();
        const T* pb = b.data_as<T>();
        T* py = y.data_as<T>();
        TSR_RETURN_IF_ERROR(check_nonzero_divisor(pb, b.numel(), "Mod: integer modulus"));
        BroadcastIndex ia(y.shape(), a.shape(), a.numel()), ib(y.shape(), b.shape(), b.numel());
        for (int64_t i = 0; i < y.numel(); ++i) {
          const T x = pa[ia(i)], d = pb[ib(i)];
          if constexpr (std::is_floating_point_v<T>) {
            T r = std::fmod(x, d);
            if (!fmod && r != 0 && ((r < 0) != (d < 0))) r += d;
            py[i] = r;
          } else if constexpr (std::is_signed_v<T>) {
            if (d == static_cast<T>(-1)) {
              py[i] = 0;
            } else {
              T r = static_cast<T>(x % d);
              if (!fmod && r != 0 && ((r < 0) != (d < 0))) r = static_cast<T>(r + d);
              py[i] = r;
            }
          } else {
            py[i] = static_cast<T>(x % d);
          }
        }
        return Status::ok();
      }
    });
  });
}

namespace {
/// y = op(a, b) for the integer dtypes (the bitwise ops); other dtypes are rejected.
template <typename Op>
Result<std::unique_ptr<Kernel>> make_integer_binary(Op op) {
  return make_fn_kernel([op](const KernelContext& k) -> Status {
    const Tensor& a = k.input(0);
    const Tensor& b = k.input(1);
    Tensor& y = k.output(0);
    return dispatch_numeric(a.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (!std::is_integral_v<T> || kIsBool<T>) {
        return unimplemented(std::string("dtype ") + dtype_name(a.dtype()) + " is not supported (integers only)");
      } else {
        const T* pa = a.data_as<T>();
        const T* pb = b.data_as<T>();
        T* py = y.data_as<T>();
        BroadcastIndex ia(y.shape(), a.shape(), a.numel()), ib(y.shape(), b.shape(), b.numel());
        for (int64_t i = 0; i < y.numel(); ++i) py[i] = static_cast<T>(op(pa[ia(i)], pb[ib(i)]));
        return Status::ok();
      }
    });
  });
}
}  // namespace

Result<std::unique_ptr<Kernel>> make_BitwiseAnd(const CompileContext&) {
  return make_integer_binary([](auto a, auto b) { return a & b; });
}
Result<std::unique_ptr<Kernel>> make_BitwiseOr(const CompileContext&) {
  return make_integer_binary([](auto a, auto b) { return a | b; });
}
Result<std::unique_ptr<Kernel>> make_BitwiseXor(const CompileContext&) {
  return make_integer_binary([](auto a, auto b) { return a ^ b; });
}

// BitShift: x << s or x >> s on unsigned integers; a shift by the bit width or more gives 0
// (C++ leaves it undefined).
Result<std::unique_ptr<Kernel>> make_BitShift(const CompileContext& ctx) {
  const bool left = ctx.node.attr_s("direction", "") == "LEFT";
  return make_integer_binary([left](auto x, auto s) {
    using T = decltype(x);
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, T>;
    if (static_cast<uint64_t>(s) >= sizeof(T) * 8) return T(0);
    return static_cast<T>(left ? static_cast<U>(x) << s : static_cast<U>(x) >> s);
  });
}

}  // namespace tessera::ref
