// Helpers for the CUDA tests (tests/unit/device_test_util.h for CUDA): one-node graphs run on
// the CUDA backend and on the CPU reference, compared; without a CUDA device the tests skip.
#pragma once

#define TSR_DEVICE_NS cuda_testing
#define TSR_DEVICE_BACKEND "cuda"
#define TSR_DEVICE_LABEL "CUDA"
#define TSR_DEVICE_DRY_RUN_ENV "TESSERA_CUDA_TESTS_ON_CPU"
#include "tests/unit/device_test_util.h"
#undef TSR_DEVICE_NS
#undef TSR_DEVICE_BACKEND
#undef TSR_DEVICE_LABEL
#undef TSR_DEVICE_DRY_RUN_ENV

#define TSR_REQUIRE_CUDA() TSR_REQUIRE_DEVICE_IMPL(cuda_testing, "CUDA")
