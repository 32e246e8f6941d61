// See cpu_features.h.
#include "backends/cpu/arm/cpu_features.h"

#include <sys/auxv.h>

namespace tessera::arm {

namespace {
// arch/arm64/include/uapi/asm/hwcap.h (stable Linux ABI); spelled out so that older
// sysroots without the newer HWCAP_ names build too.
constexpr unsigned long kHwcapAsimd = 1UL << 1;
constexpr unsigned long kHwcapAsimdHp = 1UL << 10;
constexpr unsigned long kHwcapAsimdDp = 1UL << 20;
constexpr unsigned long kHwcapSve = 1UL << 22;
}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = [] {
    const unsigned long hw = getauxval(AT_HWCAP);
    CpuFeatures r;
    r.asimd = (hw & kHwcapAsimd) != 0;
    r.asimdhp = (hw & kHwcapAsimdHp) != 0;
    r.asimddp = (hw & kHwcapAsimdDp) != 0;
    r.sve = (hw & kHwcapSve) != 0;
    return r;
  }();
  return f;
}

}  // namespace tessera::arm
