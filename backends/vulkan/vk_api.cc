// Loads the Vulkan loader library at run time (see vk_api.h).
#include "backends/vulkan/vk_api.h"

#include <dlfcn.h>

#include <mutex>

namespace tessera::vk {

Api& api() {
  static Api a;
  return a;
}

std::string load_global() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      error = "the Vulkan loader (libvulkan.so.1) is not installed";
      return;
    }
    Api& a = api();
    a.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    if (!a.vkGetInstanceProcAddr) {
      error = "libvulkan.so.1 has no vkGetInstanceProcAddr";
      return;
    }
    a.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(a.vkGetInstanceProcAddr(nullptr, "vkCreateInstance"));
    a.vkEnumerateInstanceVersion =
        reinterpret_cast<PFN_vkEnumerateInstanceVersion>(a.vkGetInstanceProcAddr(nullptr, "vkEnumerateInstanceVersion"));
    if (!a.vkCreateInstance) error = "the Vulkan loader has no vkCreateInstance";
  });
  return error;
}

std::string load_instance(VkInstance instance) {
  Api& a = api();
#define TSR_VK_LOAD(name)                                                                    \
  a.name = reinterpret_cast<PFN_##name>(a.vkGetInstanceProcAddr(instance, #name));          \
  if (!a.name) return #name;
  TSR_VK_INSTANCE_FUNCS(TSR_VK_LOAD)
#undef TSR_VK_LOAD
  return "";
}

std::string result_string(VkResult r) {
  switch (r) {
#define TSR_VK_CASE(x) \
  case x: return #x;
    TSR_VK_CASE(VK_SUCCESS)
    TSR_VK_CASE(VK_NOT_READY)
    TSR_VK_CASE(VK_TIMEOUT)
    TSR_VK_CASE(VK_INCOMPLETE)
    TSR_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    TSR_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    TSR_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    TSR_VK_CASE(VK_ERROR_DEVICE_LOST)
    TSR_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    TSR_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    TSR_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    TSR_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    TSR_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    TSR_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    TSR_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    TSR_VK_CASE(VK_ERROR_UNKNOWN)
#undef TSR_VK_CASE
    default: return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

}  // namespace tessera::vk
