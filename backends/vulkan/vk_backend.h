// The Vulkan backend's internals, shared by its files (not a public header).
//
// Model: tensors live in device memory that the shaders reach by buffer device address
// (Vulkan 1.2 bufferDeviceAddress), so a device "pointer" of the Backend interface
// (Tensor::data() of a value on the device) is the 64-bit VkDeviceAddress itself, and a
// kernel passes its tensors' addresses and its shapes in push constants: no descriptor set
// is allocated or written per node or per run. Pipelines (one per shader, shapes being push
// constants) are created when the first node that needs one is compiled (plan time) and
// cached for the process. A run records every kernel into one command buffer, with a
// memory barrier only before a dispatch that touches a range an earlier, unbarriered
// dispatch wrote (or writes a range it read); the buffer is submitted once, when the host
// needs data (copy_to_host) or at synchronize().
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/vulkan/vk_api.h"

namespace tessera::vk {

/// The compute shaders (backends/vulkan/shaders/<name>.comp), compiled by glslc at build
/// time and embedded (vk_shaders.cc).
enum class Shader { kUnary, kBinary, kCopy, kMatMul, kConv2d, kConvDirect, kConvTranspose, kPool2d, kReduce, kRows,
                    kBatchNorm, kResize, kGather, kEpilogue, kCount };

/// Largest push-constant block of any shader, in bytes (Vulkan guarantees 128).
constexpr uint32_t kPushBytes = 128;

/// A byte range of device memory [addr, addr + bytes) that a dispatch reads or writes.
struct Range {
  uint64_t addr = 0;
  uint64_t bytes = 0;
};
inline Range range_of(const Tensor& t) { return {reinterpret_cast<uint64_t>(t.data()), static_cast<uint64_t>(t.nbytes())}; }

/// The process-wide device: instance, the chosen physical device, one compute queue, the
/// pipelines, and device memory sub-allocated from a few large blocks. Thread-safe.
class Device {
 public:
  /// The device, created at the first call (physical device chosen as described at
  /// make_vulkan_backend). Errors: kUnimplemented naming why no device can be used.
  static Result<Device*> get();

  std::string name() const { return name_; }
  VkDevice device() const { return device_; }
  uint32_t queue_family() const { return queue_family_; }
  /// The pipeline of `s`, created at the first call. Errors: kInternal with the VkResult.
  Result<VkPipeline> pipeline(Shader s);
  VkPipelineLayout layout() const { return layout_; }
  /// Submits `cb` on the queue, signalling `fence` (the queue is shared by all sessions).
  VkResult submit(VkCommandBuffer cb, VkFence fence);

  /// `bytes` bytes of device memory (256-byte aligned), as a device address. Errors:
  /// kOutOfMemory.
  Result<uint64_t> allocate(uint64_t bytes);
  /// Frees an address from allocate() (0: nothing).
  void free(uint64_t addr);
  /// The buffer and offset holding [addr, addr + bytes). Errors: kInvalidArgument when the
  /// range is not inside one allocation.
  Status locate(uint64_t addr, uint64_t bytes, VkBuffer* buffer, uint64_t* offset);

  /// A host-visible, coherent buffer of `bytes` bytes, mapped; for staging.
  struct HostBuffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
    uint64_t bytes = 0;
  };
  Result<HostBuffer> make_host_buffer(uint64_t bytes);
  void destroy(HostBuffer& b);

 private:
  Device() = default;
  Status init();
  struct Block {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint64_t addr = 0, bytes = 0;
    std::vector<std::pair<uint64_t, uint64_t>> free;  // (offset, bytes), sorted, coalesced
  };
  Result<uint32_t> memory_type(uint32_t bits, VkMemoryPropertyFlags want) const;

  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  std::string name_;
  VkPhysicalDeviceMemoryProperties mem_props_{};
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipelines_[static_cast<int>(Shader::kCount)] = {};
  std::mutex mu_;  // pipelines_, blocks_, live_, the queue
  std::vector<Block> blocks_;
  std::vector<std::pair<uint64_t, uint64_t>> live_;  // (addr, bytes) of allocations, sorted
};

/// SPIR-V words of shader `s` (vk_shaders.cc).
const uint32_t* shader_code(Shader s, size_t* bytes);
const char* shader_name(Shader s);

/// One backend instance per Session: a command pool and buffer being recorded, staging
/// buffers, and the barrier bookkeeping. Kernels record into it through dispatch().
class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(Device* d);
  ~VulkanBackend() override;
  Status init();

  std::string name() const override { return "vulkan"; }
  bool host_memory() const override { return false; }
  bool supports(const CompileContext& ctx) const override;
  Result<std::unique_ptr<Kernel>> compile(const CompileContext& ctx) const override;
  Result<void*> allocate(uint64_t bytes) override;
  void deallocate(void* device_ptr) override;
  Status copy_to_device(void* dst, const void* src, uint64_t bytes) override;
  Status copy_to_host(void* dst, const void* src, uint64_t bytes) override;
  Status synchronize() override;

  Device* device() const { return d_; }
  /// Records one dispatch of `s` with `groups` work groups (x, y, z) and push constants
  /// `push` (`push_bytes` <= kPushBytes), reading `reads` and writing `writes`: a barrier is
  /// recorded first when the dispatch depends on an earlier one of this command buffer.
  Status dispatch(Shader s, const void* push, uint32_t push_bytes, const uint32_t groups[3],
                  std::initializer_list<Range> reads, std::initializer_list<Range> writes);
  /// dispatch() for a one-dimensional shader of 256 invocations per group over `n` items
  /// (at most 2048 groups; the shaders loop over the items). Errors: kInvalidArgument when
  /// n >= 2^31.
  Status dispatch_1d(Shader s, const void* push, uint32_t push_bytes, uint64_t n, std::initializer_list<Range> reads,
                     std::initializer_list<Range> writes);

 private:
  /// Compile with a fused tail (CompileContext::epilogue): Conv, MatMul and Gemm, followed by
  /// one epilogue.comp pass over their output; a null kernel for anything else.
  Result<std::unique_ptr<Kernel>> compile_fused(const CompileContext& ctx) const;
  Status begin_if_needed();
  Status flush();  // submit what was recorded and wait
  void full_barrier();
  Device* d_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool recording_ = false;
  Device::HostBuffer upload_, download_;
  uint64_t upload_used_ = 0;
  std::vector<Range> written_, read_;  // since the last barrier
  // TESSERA_VULKAN_PROFILE=1: each dispatch is submitted and waited for alone, its time
  // added per shader, and the table printed to stderr when the backend is destroyed (a
  // diagnostic: it serializes the device).
  bool profile_ = false;
  double shader_ms_[static_cast<int>(Shader::kCount)] = {};
  uint64_t shader_calls_[static_cast<int>(Shader::kCount)] = {};
  // supports() compiles the node and keeps the kernel for the compile() that follows.
  mutable std::unique_ptr<Kernel> pending_;
  mutable const Node* pending_node_ = nullptr;
};

/// An op the backend runs: `make` returns a kernel, a null kernel when it declines these
/// dtypes/attributes/shapes (the node then runs on the CPU), or an error.
using VkMake = Result<std::unique_ptr<Kernel>> (*)(VulkanBackend* b, const CompileContext& ctx);
struct VkOp {
  const char* op_type;
  VkMake make;
};
/// The ops of each file: vk_ops_elementwise.cc, vk_ops_data.cc, vk_ops_nn.cc.
void add_elementwise_ops(std::vector<VkOp>& ops);
void add_data_ops(std::vector<VkOp>& ops);
void add_nn_ops(std::vector<VkOp>& ops);

/// A declined node: the planner gives it to the next backend (the CPU).
inline Result<std::unique_ptr<Kernel>> decline() { return std::unique_ptr<Kernel>(); }
/// True when every present input and output of the node is float32.
bool all_float32(const CompileContext& ctx);
/// The device address of a tensor on the device.
inline uint64_t addr(const Tensor& t) { return reinterpret_cast<uint64_t>(t.data()); }

}  // namespace tessera::vk

namespace tessera {
/// The Vulkan backend (see backends/vulkan/vk_backend.h). Device choice: TESSERA_VULKAN_DEVICE
/// (an index into the list of devices, or a substring of a device name) when set, else the
/// first discrete GPU, then integrated, virtual, CPU (lavapipe "llvmpipe"). Needs Vulkan 1.2
/// with bufferDeviceAddress. Errors: kUnimplemented saying why no device can be used (no
/// loader, no device, TESSERA_VULKAN_DEVICE matching none), which a Session turns into a note
/// and a CPU fallback.
Result<std::unique_ptr<Backend>> make_vulkan_backend();
}  // namespace tessera
