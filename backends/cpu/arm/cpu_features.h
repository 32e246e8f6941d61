// aarch64 CPU features of the running machine, read once from the kernel's hardware
// capability bits (getauxval(AT_HWCAP), Linux; bit values from the kernel's
// arch/arm64/include/uapi/asm/hwcap.h). The ARM kernels choose their code paths with it at
// run time, the way the x86 ones use __builtin_cpu_supports. Only on aarch64 builds.
#pragma once

namespace tessera::arm {

struct CpuFeatures {
  bool asimd = false;    // AdvSIMD (NEON), float32 vectors: mandatory in ARMv8-A
  bool asimdhp = false;  // half-precision vector arithmetic (ARMv8.2-A FP16)
  bool asimddp = false;  // int8 dot product (SDOT/UDOT, ARMv8.2-A DotProd)
  bool sve = false;      // Scalable Vector Extension
};

/// The features of this CPU (computed on the first call, then cached; thread-safe).
const CpuFeatures& cpu_features();

}  // namespace tessera::arm
