// The process-wide Vulkan device: instance, physical-device choice, queue, pipelines and
// device memory (see vk_backend.h).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/vulkan/vk_backend.h"

namespace tessera::vk {

namespace {

Status vk_check(VkResult r, const std::string& what) {
  if (r == VK_SUCCESS) return Status::ok();
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    return out_of_memory("Vulkan: " + what + ": " + result_string(r));
  return internal_error("Vulkan: " + what + ": " + result_string(r));
}

/// Preference of a device type: discrete GPU first, CPU drivers last.
int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

constexpr uint64_t kBlockBytes = uint64_t{256} << 20;  // device memory is taken in blocks of 256 MiB (or more)
constexpr uint64_t kAlign = 256;

}  // namespace

Result<Device*> Device::get() {
  static std::mutex mu;
  static Device* device = nullptr;
  static std::string error;
  std::lock_guard<std::mutex> lock(mu);
  if (device) return device;
  if (!error.empty()) return unimplemented(error);
  auto* d = new Device();
  Status s = d->init();
  if (!s.is_ok()) {
    error = "backend 'vulkan': " + s.message();
    // The partly made device is leaked: destroying a half-initialized instance is not worth
    // the risk, and this happens once per process.
    return unimplemented(error);
  }
  device = d;  // lives until the process exits (shared by every session)
  return device;
}

Status Device::init() {
  std::string err = load_global();
  if (!err.empty()) return unimplemented(err);
  Api& a = api();
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (a.vkEnumerateInstanceVersion) a.vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_2) return unimplemented("the Vulkan loader is older than Vulkan 1.2");
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tessera";
  app.pEngineName = "tessera";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkResult r = a.vkCreateInstance(&ici, nullptr, &instance_);
  if (r != VK_SUCCESS) return unimplemented("cannot create a Vulkan instance (" + result_string(r) + ")");
  err = load_instance(instance_);
  if (!err.empty()) return unimplemented("the Vulkan loader lacks " + err);

  uint32_t count = 0;
  a.vkEnumeratePhysicalDevices(instance_, &count, nullptr);
  std::vector<VkPhysicalDevice> devs(count);
  if (count) a.vkEnumeratePhysicalDevices(instance_, &count, devs.data());
  if (count == 0) return unimplemented("no Vulkan device was found");

  // Usable: Vulkan 1.2, bufferDeviceAddress, a compute queue.
  struct Candidate {
    VkPhysicalDevice dev;
    VkPhysicalDeviceProperties props;
    uint32_t family;
    bool usable;
    std::string why;
  };
  std::vector<Candidate> cands;
  for (VkPhysicalDevice pd : devs) {
    Candidate c{pd, {}, 0, false, ""};
    a.vkGetPhysicalDeviceProperties(pd, &c.props);
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f12;
    bool have12 = c.props.apiVersion >= VK_API_VERSION_1_2;
    if (have12) a.vkGetPhysicalDeviceFeatures2(pd, &f2);
    uint32_t nq = 0;
    a.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qs(nq);
    a.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qs.data());
    bool found = false;
    for (uint32_t q = 0; q < nq && !found; ++q)
      if (qs[q].queueFlags & VK_QUEUE_COMPUTE_BIT) c.family = q, found = true;
    if (!have12) c.why = "Vulkan 1.2 is required";
    else if (!f12.bufferDeviceAddress) c.why = "bufferDeviceAddress is required";
    else if (!found) c.why = "no compute queue";
    else if (c.props.limits.maxPushConstantsSize < kPushBytes) c.why = "fewer than 128 bytes of push constants";
    else c.usable = true;
    cands.push_back(c);
  }
  int chosen = -1;
  if (const char* want = std::getenv("TESSERA_VULKAN_DEVICE"); want && *want) {
    std::string w = want;
    char* end = nullptr;
    long idx = std::strtol(want, &end, 10);
    std::string list;
    for (size_t i = 0; i < cands.size(); ++i) list += (i ? ", " : "") + std::to_string(i) + ": " + cands[i].props.deviceName;
    if (*end == '\0') {
      if (idx < 0 || idx >= static_cast<long>(cands.size()))
        return unimplemented("TESSERA_VULKAN_DEVICE is " + w + "; the devices are " + list);
      chosen = static_cast<int>(idx);
    } else {
      for (size_t i = 0; i < cands.size() && chosen < 0; ++i)
        if (std::string(cands[i].props.deviceName).find(w) != std::string::npos) chosen = static_cast<int>(i);
      if (chosen < 0) return unimplemented("TESSERA_VULKAN_DEVICE '" + w + "' names no device; the devices are " + list);
    }
    if (!cands[chosen].usable)
      return unimplemented(std::string("device '") + cands[chosen].props.deviceName + "': " + cands[chosen].why);
  } else {
    for (size_t i = 0; i < cands.size(); ++i) {
      if (!cands[i].usable) continue;
      if (chosen < 0 || type_rank(cands[i].props.deviceType) < type_rank(cands[chosen].props.deviceType))
        chosen = static_cast<int>(i);
    }
    if (chosen < 0) return unimplemented(std::string("no usable Vulkan device (") + cands[0].props.deviceName + ": " + cands[0].why + ")");
  }
  physical_ = cands[chosen].dev;
  name_ = cands[chosen].props.deviceName;
  queue_family_ = cands[chosen].family;
  a.vkGetPhysicalDeviceMemoryProperties(physical_, &mem_props_);

  float prio = 1.f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.bufferDeviceAddress = VK_TRUE;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &f12;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  r = a.vkCreateDevice(physical_, &dci, nullptr, &device_);
  if (r != VK_SUCCESS) return unimplemented("cannot create the Vulkan device '" + name_ + "' (" + result_string(r) + ")");
  a.vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &pcr;
  return vk_check(a.vkCreatePipelineLayout(device_, &plci, nullptr, &layout_), "pipeline layout");
}

Result<VkPipeline> Device::pipeline(Shader s) {
  std::lock_guard<std::mutex> lock(mu_);
  VkPipeline& p = pipelines_[static_cast<int>(s)];
  if (p) return p;
  Api& a = api();
  size_t bytes = 0;
  const uint32_t* code = shader_code(s, &bytes);
  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = bytes;
  smci.pCode = code;
  VkShaderModule mod = VK_NULL_HANDLE;
  TSR_RETURN_IF_ERROR(vk_check(a.vkCreateShaderModule(device_, &smci, nullptr, &mod),
                               std::string("shader module ") + shader_name(s)));
  VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = mod;
  cpci.stage.pName = "main";
  cpci.layout = layout_;
  VkResult r = a.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &cpci, nullptr, &p);
  a.vkDestroyShaderModule(device_, mod, nullptr);
  if (r != VK_SUCCESS) {
    p = VK_NULL_HANDLE;
    return vk_check(r, std::string("compute pipeline ") + shader_name(s));
  }
  return p;
}

VkResult Device::submit(VkCommandBuffer cb, VkFence fence) {
  std::lock_guard<std::mutex> lock(mu_);
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  return api().vkQueueSubmit(queue_, 1, &si, fence);
}

Result<uint32_t> Device::memory_type(uint32_t bits, VkMemoryPropertyFlags want) const {
  for (uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && (mem_props_.memoryTypes[i].propertyFlags & want) == want) return i;
  return internal_error("Vulkan: no memory type with properties " + std::to_string(want));
}

Result<uint64_t> Device::allocate(uint64_t bytes) {
  bytes = std::max<uint64_t>((bytes + kAlign - 1) / kAlign * kAlign, kAlign);
  std::lock_guard<std::mutex> lock(mu_);
  auto take = [&](Block& b, size_t k) {
    auto [off, size] = b.free[k];
    if (size == bytes) b.free.erase(b.free.begin() + static_cast<long>(k));
    else b.free[k] = {off + bytes, size - bytes};
    uint64_t addr = b.addr + off;
    live_.insert(std::upper_bound(live_.begin(), live_.end(), std::make_pair(addr, uint64_t{0})), {addr, bytes});
    return addr;
  };
  for (Block& b : blocks_)
    for (size_t k = 0; k < b.free.size(); ++k)
      if (b.free[k].second >= bytes) return take(b, k);
  // A new block.
  Api& a = api();
  Block b;
  b.bytes = std::max(kBlockBytes, bytes);
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = b.bytes;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
              VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  TSR_RETURN_IF_ERROR(vk_check(a.vkCreateBuffer(device_, &bci, nullptr, &b.buffer), "create a buffer of " + std::to_string(b.bytes) + " bytes"));
  VkMemoryRequirements req;
  a.vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  Result<uint32_t> type = memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (!type.is_ok()) type = memory_type(req.memoryTypeBits, 0);
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.pNext = &flags;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type.value();
  VkResult r = a.vkAllocateMemory(device_, &mai, nullptr, &b.memory);
  if (r != VK_SUCCESS) {
    a.vkDestroyBuffer(device_, b.buffer, nullptr);
    return out_of_memory("Vulkan: cannot allocate " + std::to_string(b.bytes) + " bytes of device memory (" + result_string(r) + ")");
  }
  a.vkBindBufferMemory(device_, b.buffer, b.memory, 0);
  VkBufferDeviceAddressInfo bai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  bai.buffer = b.buffer;
  b.addr = a.vkGetBufferDeviceAddress(device_, &bai);
  b.free.push_back({0, b.bytes});
  blocks_.push_back(std::move(b));
  return take(blocks_.back(), 0);
}

void Device::free(uint64_t addr) {
  if (!addr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::lower_bound(live_.begin(), live_.end(), std::make_pair(addr, uint64_t{0}));
  if (it == live_.end() || it->first != addr) return;
  const uint64_t bytes = it->second;
  live_.erase(it);
  for (Block& b : blocks_) {
    if (addr < b.addr || addr >= b.addr + b.bytes) continue;
    const uint64_t off = addr - b.addr;
    auto pos = std::lower_bound(b.free.begin(), b.free.end(), std::make_pair(off, uint64_t{0}));
    pos = b.free.insert(pos, {off, bytes});
    // Coalesce with the next, then the previous free range.
    if (pos + 1 != b.free.end() && pos->first + pos->second == (pos + 1)->first) {
      pos->second += (pos + 1)->second;
      b.free.erase(pos + 1);
    }
    if (pos != b.free.begin() && (pos - 1)->first + (pos - 1)->second == pos->first) {
      (pos - 1)->second += pos->second;
      b.free.erase(pos);
    }
    return;
  }
}

Status Device::locate(uint64_t addr, uint64_t bytes, VkBuffer* buffer, uint64_t* offset) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Block& b : blocks_) {
    if (addr >= b.addr && addr + bytes <= b.addr + b.bytes) {
      *buffer = b.buffer;
      *offset = addr - b.addr;
      return Status::ok();
    }
  }
  return invalid_argument("Vulkan: " + std::to_string(bytes) + " bytes at device address " + std::to_string(addr) +
                          " are not in device memory of this backend");
}

Result<Device::HostBuffer> Device::make_host_buffer(uint64_t bytes) {
  Api& a = api();
  HostBuffer h;
  h.bytes = bytes;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = bytes;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  TSR_RETURN_IF_ERROR(vk_check(a.vkCreateBuffer(device_, &bci, nullptr, &h.buffer), "staging buffer"));
  VkMemoryRequirements req;
  a.vkGetBufferMemoryRequirements(device_, h.buffer, &req);
  Result<uint32_t> type =
      memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                          VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (!type.is_ok())
    type = memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  if (!type.is_ok()) {
    a.vkDestroyBuffer(device_, h.buffer, nullptr);
    return type.status();
  }
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type.value();
  VkResult r = a.vkAllocateMemory(device_, &mai, nullptr, &h.memory);
  if (r != VK_SUCCESS) {
    a.vkDestroyBuffer(device_, h.buffer, nullptr);
    return vk_check(r, "staging memory of " + std::to_string(bytes) + " bytes");
  }
  a.vkBindBufferMemory(device_, h.buffer, h.memory, 0);
  r = a.vkMapMemory(device_, h.memory, 0, VK_WHOLE_SIZE, 0, &h.mapped);
  if (r != VK_SUCCESS) {
    destroy(h);
    return vk_check(r, "map staging memory");
  }
  return h;
}

void Device::destroy(HostBuffer& b) {
  Api& a = api();
  if (b.mapped) a.vkUnmapMemory(device_, b.memory);
  if (b.buffer) a.vkDestroyBuffer(device_, b.buffer, nullptr);
  if (b.memory) a.vkFreeMemory(device_, b.memory, nullptr);
  b = HostBuffer();
}

}  // namespace tessera::vk
