// The softmax bodies of backends/cpu/x86/softmax_x86_impl.h on aarch64, on the NEON Vec of
// simd_x86.h (AdvSIMD is part of the base ISA: no extra flags).
#define TSR_X86_ISA neon
#include "backends/cpu/x86/simd_x86.h"
#include "backends/cpu/x86/softmax_x86_impl.h"
