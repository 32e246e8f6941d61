// MaxPool / AveragePool / global pooling, the avx2 body (pool_x86.h); compiled with this
// ISA's flags (CMakeLists.txt), called only when the CPU has it.
#define TSR_X86_ISA avx2
#include "backends/cpu/x86/simd_x86.h"
#include "backends/cpu/x86/pool_x86_impl.h"
