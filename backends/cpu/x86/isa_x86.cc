// Run-time ISA detection for the x86 kernels (isa_x86.h).
#include "backends/cpu/x86/isa_x86.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace tessera::x86 {

namespace {
// -1: no override; else the Isa value.
std::atomic<int> g_override{-1};
}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx2: return "avx2";
    case Isa::kNeon: return "neon";
    default: return "scalar";
  }
}

bool isa_available(Isa isa) {
  switch (isa) {
#if defined(__x86_64__) || defined(_M_X64)
    case Isa::kAvx512: return __builtin_cpu_supports("avx512f");
    case Isa::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::kNeon: return false;
#elif defined(__aarch64__)
    case Isa::kNeon: return true;  // AdvSIMD is part of the aarch64 base ISA
    case Isa::kAvx512:
    case Isa::kAvx2: return false;
#else
    case Isa::kAvx512:
    case Isa::kAvx2:
    case Isa::kNeon: return false;
#endif
    default: return true;
  }
}

Isa best_isa() {
  const int o = g_override.load(std::memory_order_relaxed);
  if (o >= 0) return static_cast<Isa>(o);
  static const Isa detected = [] {
    // TESSERA_X86_ISA=avx512|avx2|neon|scalar narrows the choice (benchmarks of one path, or of
    // the reference kernels); a path this CPU lacks, or another value, is ignored.
    if (const char* e = std::getenv("TESSERA_X86_ISA")) {
      for (Isa i : {Isa::kAvx512, Isa::kAvx2, Isa::kNeon, Isa::kScalar})
        if (std::strcmp(e, isa_name(i)) == 0 && isa_available(i)) return i;
    }
    for (Isa i : {Isa::kAvx512, Isa::kAvx2, Isa::kNeon})
      if (isa_available(i)) return i;
    return Isa::kScalar;
  }();
  return detected;
}

void set_isa_override(std::optional<Isa> isa) {
  g_override.store(isa ? static_cast<int>(*isa) : -1, std::memory_order_relaxed);
}

}  // namespace tessera::x86
