// Helpers for the Vulkan tests (tests/unit/device_test_util.h for Vulkan): one-node graphs run on
// the Vulkan backend and on the CPU reference, compared; without a Vulkan device the tests skip.
#pragma once

#define TSR_DEVICE_NS vulkan_testing
#define TSR_DEVICE_BACKEND "vulkan"
#define TSR_DEVICE_LABEL "Vulkan"
#define TSR_DEVICE_DRY_RUN_ENV "TESSERA_VULKAN_TESTS_ON_CPU"
#include "tests/unit/device_test_util.h"
#undef TSR_DEVICE_NS
#undef TSR_DEVICE_BACKEND
#undef TSR_DEVICE_LABEL
#undef TSR_DEVICE_DRY_RUN_ENV

#define TSR_REQUIRE_VULKAN() TSR_REQUIRE_DEVICE_IMPL(vulkan_testing, "Vulkan")
