// The Vulkan entry points the backend calls, loaded at run time from the loader library
// (libvulkan.so.1) with dlopen + vkGetInstanceProcAddr, so that libtessera does not depend
// on the loader: a machine without Vulkan still runs the CPU backend, and make_backend
// ("vulkan") says why it cannot. Internal header of backends/vulkan/.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace tessera::vk {

// X(name): every function of the table (Vulkan 1.2 core; vkGetBufferDeviceAddress is core
// since 1.2).
#define TSR_VK_INSTANCE_FUNCS(X)              \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkCreateDevice)                           \
  X(vkDestroyDevice)                          \
  X(vkGetDeviceQueue)                         \
  X(vkCreateBuffer)                           \
  X(vkDestroyBuffer)                          \
  X(vkGetBufferMemoryRequirements)            \
  X(vkAllocateMemory)                         \
  X(vkFreeMemory)                             \
  X(vkBindBufferMemory)                       \
  X(vkMapMemory)                              \
  X(vkUnmapMemory)                            \
  X(vkGetBufferDeviceAddress)                 \
  X(vkCreateShaderModule)                     \
  X(vkDestroyShaderModule)                    \
  X(vkCreatePipelineLayout)                   \
  X(vkDestroyPipelineLayout)                  \
  X(vkCreateComputePipelines)                 \
  X(vkDestroyPipeline)                        \
  X(vkCreateCommandPool)                      \
  X(vkDestroyCommandPool)                     \
  X(vkAllocateCommandBuffers)                 \
  X(vkFreeCommandBuffers)                     \
  X(vkBeginCommandBuffer)                     \
  X(vkEndCommandBuffer)                       \
  X(vkResetCommandBuffer)                     \
  X(vkCmdBindPipeline)                        \
  X(vkCmdPushConstants)                       \
  X(vkCmdDispatch)                            \
  X(vkCmdPipelineBarrier)                     \
  X(vkCmdCopyBuffer)                          \
  X(vkCmdFillBuffer)                          \
  X(vkQueueSubmit)                            \
  X(vkCreateFence)                            \
  X(vkDestroyFence)                           \
  X(vkWaitForFences)                          \
  X(vkResetFences)                            \
  X(vkDeviceWaitIdle)

/// The loaded entry points. `load_global` fills the three global ones; `load_instance` the
/// rest, for one instance.
struct Api {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;
#define TSR_VK_DECLARE(name) PFN_##name name = nullptr;
  TSR_VK_INSTANCE_FUNCS(TSR_VK_DECLARE)
#undef TSR_VK_DECLARE
};

/// The process-wide table (filled by the first successful load).
Api& api();

/// dlopens the loader and reads the global entry points. Returns "" on success, else why
/// not (no loader library, no vkGetInstanceProcAddr).
std::string load_global();
/// Reads the instance-level (and device-level, through the loader's trampolines) entry
/// points of `instance`. Returns "" or the name of the first missing function.
std::string load_instance(VkInstance instance);

/// Text of a VkResult ("VK_ERROR_OUT_OF_DEVICE_MEMORY", or the number).
std::string result_string(VkResult r);

}  // namespace tessera::vk
