// The `reduction` attribute of ScatterElements and ScatterND (ONNX opset 16, 18): how an
// update combines with the value already in the output.
#pragma once

#include <string>
#include <type_traits>

namespace tessera::ref {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

inline ScatterReduction parse_scatter_reduction(const std::string& s) {
  if (s == "add") return ScatterReduction::kAdd;
  if (s == "mul") return ScatterReduction::kMul;
  if (s == "max") return ScatterReduction::kMax;
  if (s == "min") return ScatterReduction::kMin;
  return ScatterReduction::kNone;
}

/// Combines `old` and `upd` (integers wrap; bool add is or, mul is and).
template <typename T>
T scatter_combine(ScatterReduction r, T old, T upd) {
  switch (r) {
    case ScatterReduction::kNone: return upd;
    case ScatterReduction::kAdd:
      if constexpr (std::is_same_v<T, bool>) return old || upd;
      else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<std::make_unsigned_t<T>>(old) + static_cast<std::make_unsigned_t<T>>(upd));
      else return old + upd;
    case ScatterReduction::kMul:
      if constexpr (std::is_same_v<T, bool>) return old && upd;
      else if constexpr (std::is_integral_v<T>) {
        using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
        return static_cast<T>(static_cast<U>(old) * static_cast<U>(upd));
      } else return old * upd;
    case ScatterReduction::kMax: return upd > old ? upd : old;
    case ScatterReduction::kMin: return upd < old ? upd : old;
  }
  return upd;
}

}  // namespace tessera::ref
