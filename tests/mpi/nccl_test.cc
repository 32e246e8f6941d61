// The NCCL communicator at world size 1 on one GPU (scripts/gpu_check.sh runs it; without a
// device every test skips and says so). With one rank every collective is an identity or a
// copy, which is what is checked, on device buffers, through NCCL's own calls; bad arguments
// are errors.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "train/comm/comm.h"

namespace tessera::train {
namespace {

std::string no_gpu_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return cudaGetErrorString(e);
  }
  return n == 0 ? "0 devices" : "";
}

#define REQUIRE_GPU()                                                  \
  do {                                                                 \
    const std::string why = no_gpu_reason();                           \
    if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;      \
  } while (0)

struct DeviceBuffer {
  explicit DeviceBuffer(size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(p); }
  void* p = nullptr;
};

std::vector<float> ramp(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + 0.25f * static_cast<float>(i % 977);
  return v;
}

TEST(NcclComm, WorldOfOneOnOneGpu) {
  REQUIRE_GPU();
  auto local = local_communicator();
  auto nccl = nccl_communicator(*local, 0);
  ASSERT_TRUE(nccl.is_ok()) << nccl.status().to_string();
  Communicator& c = *nccl.value();
  EXPECT_EQ(c.kind(), "nccl");
  ASSERT_EQ(c.size(), 1);
  const size_t n = 100003;
  const std::vector<float> host = ramp(n, 1.f);
  DeviceBuffer a(n * 4), b(n * 4);
  ASSERT_EQ(cudaMemcpy(a.p, host.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
  std::vector<float> back(n);
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
    ASSERT_TRUE(c.all_reduce(a.p, b.p, static_cast<int64_t>(n), DType::kFloat32, op).is_ok());
    ASSERT_EQ(cudaMemcpy(back.data(), b.p, n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(back, host) << "op " << static_cast<int>(op);
  }
  ASSERT_TRUE(c.reduce_scatter(a.p, b.p, static_cast<int64_t>(n), DType::kFloat32, ReduceOp::kSum).is_ok());
  ASSERT_TRUE(c.all_gather(b.p, a.p, static_cast<int64_t>(n), DType::kFloat32).is_ok());
  ASSERT_TRUE(c.broadcast(a.p, static_cast<int64_t>(n), DType::kFloat32, 0).is_ok());
  ASSERT_TRUE(c.all_to_all(a.p, b.p, static_cast<int64_t>(n), DType::kFloat32).is_ok());
  ASSERT_EQ(cudaMemcpy(back.data(), b.p, n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, host);
  EXPECT_TRUE(c.barrier().is_ok());
  // Three all-reduces in flight, waited for in order.
  std::vector<std::unique_ptr<CommRequest>> reqs;
  for (int k = 0; k < 3; ++k) {
    auto r = c.all_reduce_async(a.p, a.p, static_cast<int64_t>(n), DType::kFloat32, ReduceOp::kSum);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    reqs.push_back(std::move(r).value());
  }
  for (auto& r : reqs) EXPECT_TRUE(r->wait().is_ok());
  auto sub = c.split(0, 0);
  ASSERT_TRUE(sub.is_ok()) << sub.status().to_string();
  EXPECT_EQ(sub.value()->size(), 1);
  EXPECT_TRUE(sub.value()->all_reduce(a.p, b.p, 10, DType::kFloat32, ReduceOp::kSum).is_ok());
  // Bad arguments.
  EXPECT_EQ(c.all_reduce(a.p, b.p, 10, DType::kString, ReduceOp::kSum).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.broadcast(a.p, 10, DType::kFloat32, 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.send(a.p, 10, DType::kFloat32, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.stats().all_reduce, 0u);  // world size 1: a ring sends nothing
}

TEST(NcclComm, BadDeviceIsAnError) {
  REQUIRE_GPU();
  auto local = local_communicator();
  auto nccl = nccl_communicator(*local, 4096);
  ASSERT_FALSE(nccl.is_ok());
  EXPECT_EQ(nccl.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::train
