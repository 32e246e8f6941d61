// The Vulkan backend: command recording, barriers, staging copies, and dispatch of nodes to
// the op table (vk_ops_*.cc). A node whose dtypes, attributes or shapes no Vulkan kernel
// takes is declined and runs on the CPU, with copies inserted by the planner (plan.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "backends/unary_math.h"
#include "backends/vulkan/vk_backend.h"

namespace tessera::vk {

namespace {

Status vk_check(VkResult r, const std::string& what) {
  if (r == VK_SUCCESS) return Status::ok();
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    return out_of_memory("Vulkan: " + what + ": " + result_string(r));
  return internal_error("Vulkan: " + what + ": " + result_string(r));
}

bool overlaps(const Range& a, const Range& b) { return a.bytes && b.bytes && a.addr < b.addr + b.bytes && b.addr < a.addr + a.bytes; }
bool overlaps_any(const Range& a, const std::vector<Range>& v) {
  for (const Range& b : v)
    if (overlaps(a, b)) return true;
  return false;
}

constexpr uint64_t kStagingMin = uint64_t{4} << 20;   // bytes
constexpr uint64_t kStagingMax = uint64_t{64} << 20;  // larger copies go in chunks

const std::unordered_map<std::string, VkMake>& op_table() {
  static const std::unordered_map<std::string, VkMake> table = [] {
    std::vector<VkOp> ops;
    add_elementwise_ops(ops);
    add_data_ops(ops);
    add_nn_ops(ops);
    std::unordered_map<std::string, VkMake> t;
    for (const VkOp& op : ops) t[op.op_type] = op.make;
    return t;
  }();
  return table;
}

/// epilogue.comp's push constants.
struct EpiloguePush {
  uint64_t y, addend, col_bias;
  uint32_t n, cols;
  int32_t op;
  float alpha, beta, scale, shift;
  int32_t has_addend, has_col_bias;
};

/// A Conv, MatMul or Gemm kernel followed by one pass of its fused tail over its output.
class EpilogueKernel final : public Kernel {
 public:
  EpilogueKernel(std::unique_ptr<Kernel> base, VulkanBackend* b, EpiloguePush p, int addend, int col_bias)
      : base_(std::move(base)), b_(b), p_(p), addend_(addend), col_bias_(col_bias) {}
  size_t scratch_bytes() const override { return base_->scratch_bytes(); }
  Status run(const KernelContext& k) const override {
    TSR_RETURN_IF_ERROR(base_->run(k));
    EpiloguePush q = p_;
    Tensor& y = k.output(0);
    q.y = addr(y);
    q.addend = addend_ >= 0 ? addr(k.input(static_cast<size_t>(addend_))) : q.y;
    q.col_bias = col_bias_ >= 0 ? addr(k.input(static_cast<size_t>(col_bias_))) : q.y;
    const Range ra = addend_ >= 0 ? range_of(k.input(static_cast<size_t>(addend_))) : Range{};
    const Range rc = col_bias_ >= 0 ? range_of(k.input(static_cast<size_t>(col_bias_))) : Range{};
    return b_->dispatch_1d(Shader::kEpilogue, &q, sizeof(q), q.n, {range_of(y), ra, rc}, {range_of(y)});
  }

 private:
  std::unique_ptr<Kernel> base_;
  VulkanBackend* b_;
  EpiloguePush p_;
  int addend_, col_bias_;
};

}  // namespace

bool all_float32(const CompileContext& ctx) {
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    if (ctx.has_input(i) && ctx.input(i).dtype != DType::kFloat32) return false;
  for (const ValueInfo& o : ctx.outputs)
    if (o.dtype != DType::kFloat32 && o.dtype != DType::kUndefined) return false;
  return true;
}

VulkanBackend::VulkanBackend(Device* d) : d_(d) {
  const char* p = std::getenv("TESSERA_VULKAN_PROFILE");
  profile_ = p && std::string(p) == "1";
}

VulkanBackend::~VulkanBackend() {
  Api& a = api();
  if (recording_) (void)flush();
  if (profile_) {
    std::fprintf(stderr, "vulkan profile (%s): shader, dispatches, ms\n", d_->name().c_str());
    for (int i = 0; i < static_cast<int>(Shader::kCount); ++i)
      if (shader_calls_[i])
        std::fprintf(stderr, "  %-16s %8llu %10.3f\n", shader_name(static_cast<Shader>(i)),
                     static_cast<unsigned long long>(shader_calls_[i]), shader_ms_[i]);
  }
  if (fence_) a.vkDestroyFence(d_->device(), fence_, nullptr);
  if (pool_) a.vkDestroyCommandPool(d_->device(), pool_, nullptr);  // frees cb_
  d_->destroy(upload_);
  d_->destroy(download_);
}

Status VulkanBackend::init() {
  Api& a = api();
  VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpci.queueFamilyIndex = d_->queue_family();
  TSR_RETURN_IF_ERROR(vk_check(a.vkCreateCommandPool(d_->device(), &cpci, nullptr, &pool_), "command pool"));
  VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cbai.commandPool = pool_;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  TSR_RETURN_IF_ERROR(vk_check(a.vkAllocateCommandBuffers(d_->device(), &cbai, &cb_), "command buffer"));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  return vk_check(a.vkCreateFence(d_->device(), &fci, nullptr, &fence_), "fence");
}

Status VulkanBackend::begin_if_needed() {
  if (recording_) return Status::ok();
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  TSR_RETURN_IF_ERROR(vk_check(api().vkBeginCommandBuffer(cb_, &bi), "begin command buffer"));
  recording_ = true;
  written_.clear();
  read_.clear();
  return Status::ok();
}

Status VulkanBackend::flush() {
  if (!recording_) return Status::ok();
  Api& a = api();
  recording_ = false;
  upload_used_ = 0;
  written_.clear();
  read_.clear();
  TSR_RETURN_IF_ERROR(vk_check(a.vkEndCommandBuffer(cb_), "end command buffer"));
  TSR_RETURN_IF_ERROR(vk_check(d_->submit(cb_, fence_), "queue submit"));
  VkResult r;
  do {
    r = a.vkWaitForFences(d_->device(), 1, &fence_, VK_TRUE, uint64_t{10} * 1000 * 1000 * 1000);
  } while (r == VK_TIMEOUT);
  TSR_RETURN_IF_ERROR(vk_check(r, "waiting for the queue (a kernel of this run failed)"));
  a.vkResetFences(d_->device(), 1, &fence_);
  return vk_check(a.vkResetCommandBuffer(cb_, 0), "reset command buffer");
}

void VulkanBackend::full_barrier() {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  api().vkCmdPipelineBarrier(cb_, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
  written_.clear();
  read_.clear();
}

Status VulkanBackend::dispatch(Shader s, const void* push, uint32_t push_bytes, const uint32_t groups[3],
                               std::initializer_list<Range> reads, std::initializer_list<Range> writes) {
  if (push_bytes > kPushBytes) return internal_error("Vulkan: push constants of " + std::string(shader_name(s)) + " too large");
  TSR_ASSIGN_OR_RETURN(VkPipeline pipe, d_->pipeline(s));
  if (profile_) TSR_RETURN_IF_ERROR(flush());  // what was recorded before this dispatch runs untimed
  TSR_RETURN_IF_ERROR(begin_if_needed());
  // A barrier only when this dispatch reads what an earlier one wrote, or writes what an
  // earlier one read or wrote, since the last barrier (RAW, WAR, WAW).
  bool dep = false;
  for (const Range& r : reads) dep = dep || overlaps_any(r, written_);
  for (const Range& w : writes) dep = dep || overlaps_any(w, written_) || overlaps_any(w, read_);
  if (dep) full_barrier();
  for (const Range& r : reads) read_.push_back(r);
  for (const Range& w : writes) written_.push_back(w);
  Api& a = api();
  a.vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
  a.vkCmdPushConstants(cb_, d_->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  a.vkCmdDispatch(cb_, groups[0], groups[1], groups[2]);
  if (profile_) {
    const auto t0 = std::chrono::steady_clock::now();
    TSR_RETURN_IF_ERROR(flush());
    const int i = static_cast<int>(s);
    shader_ms_[i] += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ++shader_calls_[i];
  }
  return Status::ok();
}

Status VulkanBackend::dispatch_1d(Shader s, const void* push, uint32_t push_bytes, uint64_t n,
                                  std::initializer_list<Range> reads, std::initializer_list<Range> writes) {
  if (n == 0) return Status::ok();
  if (n >= (uint64_t{1} << 31)) return invalid_argument("Vulkan: " + std::to_string(n) + " elements are too many for one dispatch");
  // At most kMaxGroups1d groups: the shaders loop over the items (grid-stride), which costs
  // nothing on a GPU with that many groups in flight and saves lavapipe its per-group cost.
  constexpr uint64_t kMaxGroups1d = 2048;
  const uint64_t groups = std::min<uint64_t>((n + 255) / 256, kMaxGroups1d);
  const uint64_t gx = std::min<uint64_t>(groups, 65535);
  const uint32_t g[3] = {static_cast<uint32_t>(gx), static_cast<uint32_t>((groups + gx - 1) / gx), 1};
  return dispatch(s, push, push_bytes, g, reads, writes);
}

bool VulkanBackend::supports(const CompileContext& ctx) const {
  pending_.reset();
  pending_node_ = nullptr;
  if (!(ctx.node.domain.empty() || ctx.node.domain == "ai.onnx")) return false;
  if (ctx.epilogue && !ctx.epilogue->empty()) return false;
  auto it = op_table().find(ctx.node.op_type);
  if (it == op_table().end()) return false;
  Result<std::unique_ptr<Kernel>> k = it->second(const_cast<VulkanBackend*>(this), ctx);
  if (!k.is_ok() || !k.value()) return false;  // declined or not possible here: the CPU runs it
  pending_ = std::move(k).value();
  pending_node_ = &ctx.node;
  return true;
}

Result<std::unique_ptr<Kernel>> VulkanBackend::compile(const CompileContext& ctx) const {
  // A fused elementwise tail: Conv, MatMul and Gemm take it (one more pass over the output);
  // a null kernel otherwise, and the planner then plans the nodes one by one.
  if (ctx.epilogue && !ctx.epilogue->empty()) return compile_fused(ctx);
  if (pending_ && pending_node_ == &ctx.node) {
    pending_node_ = nullptr;
    return std::move(pending_);
  }
  auto it = op_table().find(ctx.node.op_type);
  if (it == op_table().end()) return unimplemented(ctx.node.describe() + ": no Vulkan kernel for op " + ctx.node.op_type);
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, it->second(const_cast<VulkanBackend*>(this), ctx));
  if (!k) return unimplemented(ctx.node.describe() + ": the Vulkan kernel does not take these inputs");
  return k;
}

Result<std::unique_ptr<Kernel>> VulkanBackend::compile_fused(const CompileContext& ctx) const {
  const std::string& op = ctx.node.op_type;
  if ((op != "Conv" && op != "MatMul" && op != "Gemm") || ctx.outputs.size() != 1) return std::unique_ptr<Kernel>();
  const Epilogue& ep = *ctx.epilogue;
  EpiloguePush p{};
  UnaryMath u;  // unary.comp's numbering (backends/unary_math_op.h); -1: no activation
  if (!unary_math_of_activation(ep.act, &u)) return std::unique_ptr<Kernel>();
  p.op = u.op == UnaryMathOp::kIdentity ? -1 : static_cast<int32_t>(u.op);
  p.alpha = ep.act.alpha;
  p.beta = ep.act.beta;
  p.scale = ep.act.scale;
  p.shift = ep.act.shift;
  const Shape& ys = ctx.outputs[0].shape;
  int64_t n = 1;
  for (int64_t d : ys) n *= d;
  if (n >= (int64_t{1} << 31)) return std::unique_ptr<Kernel>();
  p.n = static_cast<uint32_t>(n);
  p.cols = static_cast<uint32_t>(ys.empty() ? 1 : std::max<int64_t>(ys.back(), 1));
  p.has_addend = ep.addend_input >= 0;
  p.has_col_bias = ep.col_bias_input >= 0;
  for (int i : {ep.addend_input, ep.col_bias_input})
    if (i >= 0 && (!ctx.has_input(static_cast<size_t>(i)) || ctx.input(static_cast<size_t>(i)).dtype != DType::kFloat32))
      return std::unique_ptr<Kernel>();
  if (ep.addend_input >= 0 && ctx.input(static_cast<size_t>(ep.addend_input)).shape != ys) return std::unique_ptr<Kernel>();
  // The node's own inputs only: the tail's operands sit after them.
  const size_t own_n = std::min(ctx.node.inputs.size(), ctx.inputs.size());
  std::vector<const ValueInfo*> own(ctx.inputs.begin(), ctx.inputs.begin() + static_cast<std::ptrdiff_t>(own_n));
  CompileContext base{ctx.node, own, ctx.outputs};
  base.threads = ctx.threads;
  auto it = op_table().find(op);
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, it->second(const_cast<VulkanBackend*>(this), base));
  if (!k) return k;
  TSR_RETURN_IF_ERROR(d_->pipeline(Shader::kEpilogue).status());
  return std::unique_ptr<Kernel>(new EpilogueKernel(std::move(k), const_cast<VulkanBackend*>(this), p, ep.addend_input,
                                                    ep.col_bias_input));
}

Result<void*> VulkanBackend::allocate(uint64_t bytes) {
  TSR_ASSIGN_OR_RETURN(uint64_t addr, d_->allocate(bytes));
  const uint64_t size = std::max<uint64_t>((bytes + 255) / 256 * 256, 256);
  // Poisoned like the host arena (0xFF: NaN as float), so a kernel that leaves an output
  // element unwritten shows up as NaN in the tests instead of a lucky zero.
  VkBuffer buf;
  uint64_t off;
  Status s = d_->locate(addr, size, &buf, &off);
  if (s.is_ok()) s = begin_if_needed();
  if (s.is_ok()) {
    const Range w{addr, size};
    if (overlaps_any(w, written_) || overlaps_any(w, read_)) full_barrier();
    api().vkCmdFillBuffer(cb_, buf, off, size, 0xFFFFFFFFu);
    written_.push_back(w);
  }
  if (!s.is_ok()) {
    d_->free(addr);
    return s;
  }
  return reinterpret_cast<void*>(addr);
}

void VulkanBackend::deallocate(void* p) {
  if (!p) return;
  (void)flush();  // work recorded or in flight may still use it
  d_->free(reinterpret_cast<uint64_t>(p));
}

Status VulkanBackend::copy_to_device(void* dst, const void* src, uint64_t bytes) {
  if (bytes == 0) return Status::ok();
  const uint64_t daddr = reinterpret_cast<uint64_t>(dst);
  VkBuffer buf;
  uint64_t off;
  TSR_RETURN_IF_ERROR(d_->locate(daddr, bytes, &buf, &off));
  uint64_t done = 0;
  while (done < bytes) {
    const uint64_t left = bytes - done;
    uint64_t room = upload_.bytes > upload_used_ ? upload_.bytes - upload_used_ : 0;
    if (room < std::min(left, kStagingMin)) {
      // Full (or too small): run what was recorded, then reuse (or grow) the staging buffer.
      TSR_RETURN_IF_ERROR(flush());
      const uint64_t want = std::min(std::max(left, kStagingMin), kStagingMax);
      if (upload_.bytes < want) {
        d_->destroy(upload_);
        TSR_ASSIGN_OR_RETURN(upload_, d_->make_host_buffer(want));
      }
      room = upload_.bytes;
    }
    const uint64_t chunk = std::min(left, room);
    std::memcpy(static_cast<uint8_t*>(upload_.mapped) + upload_used_, static_cast<const uint8_t*>(src) + done, chunk);
    TSR_RETURN_IF_ERROR(begin_if_needed());
    const Range w{daddr + done, chunk};
    if (overlaps_any(w, written_) || overlaps_any(w, read_)) full_barrier();
    VkBufferCopy region{upload_used_, off + done, chunk};
    api().vkCmdCopyBuffer(cb_, upload_.buffer, buf, 1, &region);
    written_.push_back(w);
    upload_used_ = (upload_used_ + chunk + 255) / 256 * 256;
    done += chunk;
  }
  return Status::ok();
}

Status VulkanBackend::copy_to_host(void* dst, const void* src, uint64_t bytes) {
  if (bytes == 0) return flush();
  const uint64_t saddr = reinterpret_cast<uint64_t>(src);
  VkBuffer buf;
  uint64_t off;
  TSR_RETURN_IF_ERROR(d_->locate(saddr, bytes, &buf, &off));
  if (download_.bytes < std::min(bytes, kStagingMax)) {
    TSR_RETURN_IF_ERROR(flush());
    d_->destroy(download_);
    TSR_ASSIGN_OR_RETURN(download_, d_->make_host_buffer(std::min(std::max(bytes, kStagingMin), kStagingMax)));
  }
  uint64_t done = 0;
  while (done < bytes) {
    const uint64_t chunk = std::min(bytes - done, download_.bytes);
    TSR_RETURN_IF_ERROR(begin_if_needed());
    const Range r{saddr + done, chunk};
    if (overlaps_any(r, written_)) full_barrier();
    VkBufferCopy region{off + done, 0, chunk};
    api().vkCmdCopyBuffer(cb_, buf, download_.buffer, 1, &region);
    // The host reads the staging buffer after the fence; a transfer-to-host barrier makes
    // the copy's writes visible to it.
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    api().vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    TSR_RETURN_IF_ERROR(flush());
    std::memcpy(static_cast<uint8_t*>(dst) + done, download_.mapped, chunk);
    done += chunk;
  }
  return Status::ok();
}

Status VulkanBackend::synchronize() { return flush(); }

}  // namespace tessera::vk

namespace tessera {

Result<std::unique_ptr<Backend>> make_vulkan_backend() {
  TSR_ASSIGN_OR_RETURN(vk::Device * d, vk::Device::get());
  auto b = std::make_unique<vk::VulkanBackend>(d);
  TSR_RETURN_IF_ERROR(b->init());
  return std::unique_ptr<Backend>(std::move(b));
}

}  // namespace tessera
