// The C API (tessera/tessera.h): results against a scalar reference and the C++ Session on a
// small model built here, zero-copy loading from a buffer, and every bad-input case of
// issue 5 (null handle or pointer, wrong buffer size, dtype or shape, unknown backend, run
// before inputs are set, corrupt model buffer): each returns an error code and a message
// naming the culprit, never a crash. The same suites run under ASan + UBSan
// (tessera_c_api_tests_asan, ctest CApi.asan_ubsan).
#include "tessera/tessera.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tessera/session.h"
#include "tessera/tsr_file.h"

extern "C" int tsr_c99_check(const char* tsr_path, const float* x, int batch, const float* expected_y, char* message,
                              size_t message_size);

namespace tessera {
namespace {

constexpr int kIn = 4, kOut = 3;

float w_at(int k, int j) { return 0.25f * static_cast<float>((k * kOut + j) % 7) - 0.6f; }
float b_at(int j) { return 0.1f * static_cast<float>(j) - 0.05f; }

/// y = Relu(x W + b), h = x W, with x: float[batch, 4] ("batch" symbolic), W: float[4, 3],
/// b: float[3]. Outputs in the order y, h.
Model make_model() {
  Model m;
  m.meta.ir_version = 8;
  m.meta.producer_name = "c_api_test";
  m.meta.opset_imports = {{"", 17}};
  Graph& g = m.graph;
  g.name = "main";
  auto value = [](const std::string& name, std::vector<Dim> shape) {
    Value v;
    v.name = name;
    v.dtype = DType::kFloat32;
    v.has_shape = true;
    v.shape = std::move(shape);
    return v;
  };
  int x = g.add_value(value("x", {{-1, "batch"}, {kIn, ""}}));
  g.inputs.push_back(x);
  Tensor wt = Tensor::allocate(DType::kFloat32, {kIn, kOut}).value();
  for (int k = 0; k < kIn; ++k)
    for (int j = 0; j < kOut; ++j) wt.data_as<float>()[k * kOut + j] = w_at(k, j);
  Value w = value("W", {{kIn, ""}, {kOut, ""}});
  w.initializer = std::make_shared<const Tensor>(std::move(wt));
  int wid = g.add_value(w);
  Tensor bt = Tensor::allocate(DType::kFloat32, {kOut}).value();
  for (int j = 0; j < kOut; ++j) bt.data_as<float>()[j] = b_at(j);
  Value b = value("b", {{kOut, ""}});
  b.initializer = std::make_shared<const Tensor>(std::move(bt));
  int bid = g.add_value(b);
  int h = g.add_value(value("h", {{-1, "batch"}, {kOut, ""}}));
  int s = g.add_value(value("s", {{-1, "batch"}, {kOut, ""}}));
  int y = g.add_value(value("y", {{-1, "batch"}, {kOut, ""}}));
  auto node = [](const std::string& op, std::vector<int> in, std::vector<int> out) {
    Node n;
    n.name = op + "_0";
    n.op_type = op;
    n.opset = 17;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    return n;
  };
  g.nodes.push_back(node("MatMul", {x, wid}, {h}));
  g.nodes.push_back(node("Add", {h, bid}, {s}));
  g.nodes.push_back(node("Relu", {s}, {y}));
  g.outputs = {y, h};
  return m;
}

/// The reference: y = max(0, x W + b) and h = x W, in double then rounded.
void reference(const std::vector<float>& x, int batch, std::vector<float>* y, std::vector<float>* h,
               float w_scale = 1.0f) {
  y->assign(static_cast<size_t>(batch) * kOut, 0.f);
  h->assign(static_cast<size_t>(batch) * kOut, 0.f);
  for (int n = 0; n < batch; ++n)
    for (int j = 0; j < kOut; ++j) {
      double acc = 0;
      for (int k = 0; k < kIn; ++k) acc += double{x[n * kIn + k]} * (w_scale * w_at(k, j));
      (*h)[n * kOut + j] = static_cast<float>(acc);
      (*y)[n * kOut + j] = static_cast<float>(std::max(0.0, acc + b_at(j)));
    }
}

std::vector<float> make_input(int batch) {
  std::vector<float> x(static_cast<size_t>(batch) * kIn);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.37f * static_cast<float>(i % 11) - 1.3f + 0.01f * static_cast<float>(i);
  return x;
}

/// A 64-byte aligned copy of the model's .tsr image (freed with std::free).
struct Image {
  uint8_t* data = nullptr;
  size_t size = 0;
  ~Image() { std::free(data); }
};
void make_image(Image* img) {
  std::vector<uint8_t> bytes = serialize_tsr(make_model()).value();
  img->size = bytes.size();
  img->data = static_cast<uint8_t*>(std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64));
  std::memcpy(img->data, bytes.data(), bytes.size());
}

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/c_api_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".tsr";
    ASSERT_TRUE(write_tsr_file(make_model(), path_).is_ok());
    ASSERT_EQ(tsr_model_load(path_.c_str(), &model_), TSR_OK) << tsr_last_error();
    ASSERT_EQ(tsr_session_create(model_, nullptr, &session_), TSR_OK) << tsr_last_error();
  }
  void TearDown() override {
    EXPECT_EQ(tsr_session_destroy(session_), TSR_OK);
    EXPECT_EQ(tsr_model_destroy(model_), TSR_OK);
    ::unlink(path_.c_str());
  }
  /// Binds x of `batch` rows (kept in x_).
  tsr_status set_x(int batch) {
    x_ = make_input(batch);
    const int64_t dims[2] = {batch, kIn};
    return tsr_session_set_input(session_, 0, TSR_DTYPE_FLOAT32, dims, 2, x_.data(), x_.size() * sizeof(float));
  }
  std::vector<float> output(size_t index) {
    const void* data = nullptr;
    size_t bytes = 0;
    EXPECT_EQ(tsr_session_output_data(session_, index, &data, &bytes), TSR_OK) << tsr_last_error();
    if (!data) return {};
    const float* f = static_cast<const float*>(data);
    return std::vector<float>(f, f + bytes / sizeof(float));
  }
  std::string path_;
  tsr_model* model_ = nullptr;
  tsr_session* session_ = nullptr;
  std::vector<float> x_;
};

/// Expects `status` to be `code` and the last error to contain `text`.
#define EXPECT_ERROR(call, code, text)                                                  \
  do {                                                                                  \
    tsr_status _s = (call);                                                             \
    EXPECT_EQ(_s, code) << #call << " -> " << tsr_status_name(_s) << ": " << tsr_last_error(); \
    EXPECT_NE(std::string(tsr_last_error()).find(text), std::string::npos)              \
        << #call << ": message '" << tsr_last_error() << "' lacks '" << (text) << "'";  \
  } while (0)

TEST(CApiBasics, VersionsAndStatusNames) {
  int major = -1, minor = -1, patch = -1;
  ASSERT_EQ(tsr_get_version(&major, &minor, &patch), TSR_OK);
  EXPECT_EQ(major, TESSERA_VERSION_MAJOR);
  EXPECT_EQ(minor, TESSERA_VERSION_MINOR);
  EXPECT_EQ(patch, TESSERA_VERSION_PATCH);
  uint32_t fv = 0;
  ASSERT_EQ(tsr_get_format_version(&fv), TSR_OK);
  EXPECT_EQ(fv, kTsrFormatVersion);
  EXPECT_ERROR(tsr_get_version(nullptr, &minor, &patch), TSR_INVALID_ARGUMENT, "'major' is null");
  EXPECT_ERROR(tsr_get_format_version(nullptr), TSR_INVALID_ARGUMENT, "format_version");
  EXPECT_STREQ(tsr_status_name(TSR_OK), "OK");
  EXPECT_STREQ(tsr_status_name(TSR_INVALID_FILE), "INVALID_FILE");
  EXPECT_STREQ(tsr_status_name(static_cast<tsr_status>(99)), "UNKNOWN");
  EXPECT_STREQ(tsr_status_name(static_cast<tsr_status>(-1)), "UNKNOWN");
}

TEST(CApiBasics, TensorHelpers) {
  size_t n = 0;
  ASSERT_EQ(tsr_dtype_size(TSR_DTYPE_FLOAT32, &n), TSR_OK);
  EXPECT_EQ(n, 4u);
  ASSERT_EQ(tsr_dtype_size(TSR_DTYPE_INT64, &n), TSR_OK);
  EXPECT_EQ(n, 8u);
  ASSERT_EQ(tsr_dtype_size(TSR_DTYPE_FLOAT16, &n), TSR_OK);
  EXPECT_EQ(n, 2u);
  const char* name = nullptr;
  ASSERT_EQ(tsr_dtype_name(TSR_DTYPE_BOOL, &name), TSR_OK);
  EXPECT_STREQ(name, "bool");
  EXPECT_ERROR(tsr_dtype_size(static_cast<tsr_dtype>(8), &n), TSR_INVALID_ARGUMENT, "dtype 8");   // string
  EXPECT_ERROR(tsr_dtype_size(static_cast<tsr_dtype>(999), &n), TSR_INVALID_ARGUMENT, "dtype 999");
  EXPECT_ERROR(tsr_dtype_size(TSR_DTYPE_UNDEFINED, &n), TSR_INVALID_ARGUMENT, "dtype 0");
  EXPECT_ERROR(tsr_dtype_size(static_cast<tsr_dtype>(-3), &n), TSR_INVALID_ARGUMENT, "dtype -3");
  EXPECT_ERROR(tsr_dtype_size(TSR_DTYPE_RANGE_MAX_, &n), TSR_INVALID_ARGUMENT, "dtype 2147483647");
  EXPECT_ERROR(tsr_dtype_size(TSR_DTYPE_FLOAT32, nullptr), TSR_INVALID_ARGUMENT, "'size' is null");

  const int64_t dims[3] = {2, 3, 5};
  ASSERT_EQ(tsr_tensor_element_count(dims, 3, &n), TSR_OK);
  EXPECT_EQ(n, 30u);
  ASSERT_EQ(tsr_tensor_element_count(nullptr, 0, &n), TSR_OK);
  EXPECT_EQ(n, 1u) << "a rank-0 tensor holds one element";
  ASSERT_EQ(tsr_tensor_byte_size(TSR_DTYPE_FLOAT64, dims, 3, &n), TSR_OK);
  EXPECT_EQ(n, 240u);
  const int64_t zero[2] = {4, 0};
  ASSERT_EQ(tsr_tensor_byte_size(TSR_DTYPE_FLOAT32, zero, 2, &n), TSR_OK);
  EXPECT_EQ(n, 0u);
  n = 77;
  const int64_t neg[2] = {2, -1};
  EXPECT_ERROR(tsr_tensor_element_count(neg, 2, &n), TSR_INVALID_ARGUMENT, "dim 1 is -1");
  EXPECT_EQ(n, 77u) << "out-parameters are unchanged on error";
  const int64_t huge[3] = {int64_t{1} << 30, int64_t{1} << 30, int64_t{1} << 30};
  EXPECT_ERROR(tsr_tensor_element_count(huge, 3, &n), TSR_INVALID_ARGUMENT, "");
  EXPECT_ERROR(tsr_tensor_element_count(nullptr, 2, &n), TSR_INVALID_ARGUMENT, "'dims' is null");
}

TEST_F(CApi, ModelMetadata) {
  size_t n = 0;
  ASSERT_EQ(tsr_model_input_count(model_, &n), TSR_OK);
  EXPECT_EQ(n, 1u);
  ASSERT_EQ(tsr_model_output_count(model_, &n), TSR_OK);
  EXPECT_EQ(n, 2u);
  const char* name = nullptr;
  ASSERT_EQ(tsr_model_input_name(model_, 0, &name), TSR_OK);
  EXPECT_STREQ(name, "x");
  ASSERT_EQ(tsr_model_output_name(model_, 1, &name), TSR_OK);
  EXPECT_STREQ(name, "h");
  size_t index = 9;
  ASSERT_EQ(tsr_model_output_index(model_, "h", &index), TSR_OK);
  EXPECT_EQ(index, 1u);
  EXPECT_ERROR(tsr_model_input_index(model_, "nope", &index), TSR_NOT_FOUND, "no input 'nope'; the model's inputs are: 'x'");
  tsr_dtype dt = TSR_DTYPE_UNDEFINED;
  ASSERT_EQ(tsr_model_input_dtype(model_, 0, &dt), TSR_OK);
  EXPECT_EQ(dt, TSR_DTYPE_FLOAT32);
  int64_t dims[4] = {0, 0, 0, 0};
  int32_t rank = 0;
  ASSERT_EQ(tsr_model_input_shape(model_, 0, dims, 4, &rank), TSR_OK);
  ASSERT_EQ(rank, 2);
  EXPECT_EQ(dims[0], -1) << "symbolic 'batch' is -1";
  EXPECT_EQ(dims[1], kIn);
  // Rank only, then too little room: the rank is still reported.
  ASSERT_EQ(tsr_model_output_shape(model_, 0, nullptr, 0, &rank), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(rank, 2);
  EXPECT_ERROR(tsr_model_output_shape(model_, 0, dims, 1, &rank), TSR_INVALID_ARGUMENT, "rank 2; 'dims' holds only 1");
  EXPECT_ERROR(tsr_model_input_name(model_, 1, &name), TSR_INVALID_ARGUMENT, "input index 1 is out of range: the model has 1 input");
  EXPECT_ERROR(tsr_model_output_dtype(model_, 2, &dt), TSR_INVALID_ARGUMENT, "output index 2 is out of range");
}

TEST_F(CApi, RunMatchesReferenceAndCppSession) {
  for (int batch : {1, 2, 5}) {
    ASSERT_EQ(set_x(batch), TSR_OK) << tsr_last_error();
    ASSERT_EQ(tsr_session_run(session_), TSR_OK) << tsr_last_error();
    std::vector<float> y_ref, h_ref;
    reference(x_, batch, &y_ref, &h_ref);
    std::vector<float> y = output(0), h = output(1);
    ASSERT_EQ(y.size(), y_ref.size());
    ASSERT_EQ(h.size(), h_ref.size());
    bool some_zero = false, some_positive = false;
    for (size_t i = 0; i < y.size(); ++i) {
      // fp32 dot products of length 4: a few ulps of the largest term.
      EXPECT_NEAR(y[i], y_ref[i], 1e-5f) << "batch " << batch << " y[" << i << "]";
      EXPECT_NEAR(h[i], h_ref[i], 1e-5f) << "batch " << batch << " h[" << i << "]";
      some_zero |= y[i] == 0.f;
      some_positive |= y[i] > 0.f;
    }
    if (batch == 5) {
      EXPECT_TRUE(some_zero && some_positive) << "the input should exercise both sides of Relu";
    }
    int64_t dims[2];
    int32_t rank = 0;
    ASSERT_EQ(tsr_session_output_shape(session_, 0, dims, 2, &rank), TSR_OK);
    EXPECT_EQ(rank, 2);
    EXPECT_EQ(dims[0], batch);
    EXPECT_EQ(dims[1], kOut);

    // The C++ Session on the same file gives the same bytes.
    auto s = Session::load(path_);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    Tensor x = Tensor::wrap(DType::kFloat32, {batch, kIn}, x_.data());
    auto out = (*s)->run({{"x", x}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    ASSERT_EQ(out.value()[0].nbytes(), y.size() * sizeof(float));
    EXPECT_EQ(std::memcmp(out.value()[0].data(), y.data(), y.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(out.value()[1].data(), h.data(), h.size() * sizeof(float)), 0);
  }
}

/// One session run from two threads at once is outside the contract (tessera.h), but it is
/// refused with an error instead of racing on the session's outputs: found by the
/// helper-break tester, where it crashed (double free) in 4 of 6 runs.
TEST_F(CApi, OverlappingRunsOfOneSessionAreRefusedNotRaced) {
  ASSERT_EQ(set_x(5), TSR_OK) << tsr_last_error();
  std::atomic<int> ok{0}, refused{0}, other{0}, ready{0};
  constexpr int kRuns = 20000;  // per thread; whether the runs overlap is up to the scheduler
  auto work = [&] {
    ++ready;
    while (ready.load() < 2) std::this_thread::yield();
    for (int i = 0; i < kRuns; ++i) {
      const tsr_status s = tsr_session_run(session_);
      if (s == TSR_OK) ++ok;
      else if (s == TSR_INVALID_ARGUMENT && std::string(tsr_last_error()).find("already running") != std::string::npos)
        ++refused;
      else ++other;
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(ok.load(), 0);
  EXPECT_EQ(ok.load() + refused.load(), 2 * kRuns);
  // The session still works on one thread.
  ASSERT_EQ(tsr_session_run(session_), TSR_OK) << tsr_last_error();
  EXPECT_EQ(output(0).size(), static_cast<size_t>(5 * kOut));
}

TEST_F(CApi, CallerOutputBuffers) {
  ASSERT_EQ(set_x(2), TSR_OK);
  float y[2 * kOut], h[2 * kOut];
  for (float& v : y) v = -7.f;
  ASSERT_EQ(tsr_session_set_output_buffer(session_, 0, y, sizeof y), TSR_OK);
  ASSERT_EQ(tsr_session_set_output_buffer(session_, 1, h, sizeof h), TSR_OK);
  ASSERT_EQ(tsr_session_run(session_), TSR_OK) << tsr_last_error();
  std::vector<float> y_ref, h_ref;
  reference(x_, 2, &y_ref, &h_ref);
  for (int i = 0; i < 2 * kOut; ++i) {
    EXPECT_NEAR(y[i], y_ref[i], 1e-5f) << i;
    EXPECT_NEAR(h[i], h_ref[i], 1e-5f) << i;
  }
  const void* data = nullptr;
  size_t bytes = 0;
  ASSERT_EQ(tsr_session_output_data(session_, 0, &data, &bytes), TSR_OK);
  EXPECT_EQ(data, static_cast<const void*>(y)) << "output_data points into the caller's buffer";
  EXPECT_EQ(bytes, sizeof y);

  // Too small for output 1 (batch 3 needs 36 bytes): the run fails, no buffer is written.
  ASSERT_EQ(set_x(3), TSR_OK);
  float big_y[3 * kOut];
  for (float& v : big_y) v = -7.f;
  ASSERT_EQ(tsr_session_set_output_buffer(session_, 0, big_y, sizeof big_y), TSR_OK);
  EXPECT_ERROR(tsr_session_run(session_), TSR_INVALID_ARGUMENT,
               "output 'h' is float[3,3], 36 bytes; the caller's buffer for it holds 24 bytes");
  for (float v : big_y) EXPECT_EQ(v, -7.f) << "no caller buffer is written when one is too small";
  EXPECT_ERROR(tsr_session_output_data(session_, 0, &data, &bytes), TSR_INVALID_ARGUMENT, "no successful tsr_session_run");
  // Unbinding output 1: the session owns it again and the run succeeds.
  ASSERT_EQ(tsr_session_set_output_buffer(session_, 1, nullptr, 0), TSR_OK);
  ASSERT_EQ(tsr_session_run(session_), TSR_OK) << tsr_last_error();
  reference(x_, 3, &y_ref, &h_ref);
  std::vector<float> h3 = output(1);
  ASSERT_EQ(h3.size(), h_ref.size());
  for (size_t i = 0; i < h3.size(); ++i) EXPECT_NEAR(h3[i], h_ref[i], 1e-5f);
  for (int i = 0; i < 3 * kOut; ++i) EXPECT_NEAR(big_y[i], y_ref[i], 1e-5f);
  EXPECT_ERROR(tsr_session_set_output_buffer(session_, 0, y, 0), TSR_INVALID_ARGUMENT, "'bytes' is 0");
  EXPECT_ERROR(tsr_session_set_output_buffer(session_, 2, y, 4), TSR_INVALID_ARGUMENT, "output index 2");
}

TEST(CApiBuffer, LoadsWithoutCopyingAndRejectsCorruptImages) {
  Image img;
  make_image(&img);
  tsr_model* model = nullptr;
  ASSERT_EQ(tsr_model_load_buffer(img.data, img.size, &model), TSR_OK) << tsr_last_error();
  tsr_session* session = nullptr;
  ASSERT_EQ(tsr_session_create(model, nullptr, &session), TSR_OK) << tsr_last_error();
  ASSERT_EQ(tsr_model_destroy(model), TSR_OK) << "the session shares the model";
  // Zero copy: doubling W in the caller's image after the load (which verified it) and
  // before the first run (which plans, and may repack weights) doubles h.
  size_t found = 0;
  for (size_t off = 0; off + kIn * kOut * 4 <= img.size; off += 64) {
    float* w = reinterpret_cast<float*>(img.data + off);
    bool match = true;
    for (int i = 0; i < kIn * kOut && match; ++i) match = w[i] == w_at(i / kOut, i % kOut);
    if (match) {
      for (int i = 0; i < kIn * kOut; ++i) w[i] *= 2.f;
      ++found;
    }
  }
  ASSERT_EQ(found, 1u) << "W must appear once, 64-byte aligned, in the image";
  std::vector<float> x = make_input(2);
  const int64_t dims[2] = {2, kIn};
  ASSERT_EQ(tsr_session_set_input(session, 0, TSR_DTYPE_FLOAT32, dims, 2, x.data(), x.size() * 4), TSR_OK);
  ASSERT_EQ(tsr_session_run(session), TSR_OK) << tsr_last_error();
  const void* data = nullptr;
  size_t bytes = 0;
  ASSERT_EQ(tsr_session_output_data(session, 1, &data, &bytes), TSR_OK);
  ASSERT_EQ(bytes, 2u * kOut * sizeof(float));
  std::vector<float> y_ref, h_ref;
  reference(x, 2, &y_ref, &h_ref, 2.f);
  for (int i = 0; i < 2 * kOut; ++i) EXPECT_NEAR(static_cast<const float*>(data)[i], h_ref[i], 1e-5f) << i;
  ASSERT_EQ(tsr_session_destroy(session), TSR_OK);

  // Bad buffers: unaligned, empty, null, truncated, garbage, a flipped byte in the header.
  model = nullptr;
  EXPECT_ERROR(tsr_model_load_buffer(img.data + 1, img.size - 1, &model), TSR_INVALID_ARGUMENT, "not 64-byte aligned");
  EXPECT_ERROR(tsr_model_load_buffer(img.data, 0, &model), TSR_INVALID_ARGUMENT, "'size' is 0");
  EXPECT_ERROR(tsr_model_load_buffer(nullptr, img.size, &model), TSR_INVALID_ARGUMENT, "'data' is null");
  EXPECT_ERROR(tsr_model_load_buffer(img.data, img.size, nullptr), TSR_INVALID_ARGUMENT, "'model' is null");
  for (size_t cut : {size_t{4}, size_t{64}, img.size / 2, img.size - 1}) {
    tsr_status s = tsr_model_load_buffer(img.data, cut, &model);
    EXPECT_EQ(s, TSR_INVALID_FILE) << "truncated to " << cut << ": " << tsr_last_error();
    EXPECT_NE(std::string(tsr_last_error()).find("<buffer>"), std::string::npos) << tsr_last_error();
  }
  Image garbage;
  garbage.size = 4096;
  garbage.data = static_cast<uint8_t*>(std::aligned_alloc(64, garbage.size));
  for (size_t i = 0; i < garbage.size; ++i) garbage.data[i] = static_cast<uint8_t>(i * 131 + 7);
  EXPECT_EQ(tsr_model_load_buffer(garbage.data, garbage.size, &model), TSR_INVALID_FILE) << tsr_last_error();
  for (size_t off : {size_t{0}, size_t{8}, size_t{20}, size_t{40}}) {
    Image bad;
    make_image(&bad);
    bad.data[off] ^= 0x5A;
    tsr_status s = tsr_model_load_buffer(bad.data, bad.size, &model);
    EXPECT_NE(s, TSR_OK) << "byte " << off << " flipped";
    if (s == TSR_OK) tsr_model_destroy(model);
  }
  EXPECT_EQ(model, nullptr) << "out-parameter unchanged on every failure";
}

TEST(CApiBuffer, BadFiles) {
  tsr_model* model = nullptr;
  EXPECT_ERROR(tsr_model_load("/nonexistent/m.tsr", &model), TSR_IO_ERROR, "/nonexistent/m.tsr");
  std::string path = ::testing::TempDir() + "/c_api_garbage_" + std::to_string(::getpid()) + ".tsr";
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("this is not a tsr file, it is text long enough to be read as one", f);
  std::fclose(f);
  EXPECT_ERROR(tsr_model_load(path.c_str(), &model), TSR_INVALID_FILE, path);
  ::unlink(path.c_str());
  EXPECT_EQ(model, nullptr);
  EXPECT_ERROR(tsr_model_load(nullptr, &model), TSR_INVALID_ARGUMENT, "'path' is null");
}

TEST_F(CApi, NullHandlesAndPointers) {
  size_t n = 0;
  const char* name = nullptr;
  tsr_dtype dt;
  int64_t dims[2] = {1, kIn};
  int32_t rank = 0;
  float x[kIn] = {0, 0, 0, 0};
  const void* data = nullptr;
  int threads = 0;
  EXPECT_ERROR(tsr_model_input_count(nullptr, &n), TSR_INVALID_ARGUMENT, "tsr_model_input_count: 'model' is null");
  EXPECT_ERROR(tsr_model_input_count(model_, nullptr), TSR_INVALID_ARGUMENT, "'count' is null");
  EXPECT_ERROR(tsr_model_output_count(nullptr, &n), TSR_INVALID_ARGUMENT, "'model' is null");
  EXPECT_ERROR(tsr_model_input_name(nullptr, 0, &name), TSR_INVALID_ARGUMENT, "'model' is null");
  EXPECT_ERROR(tsr_model_input_name(model_, 0, nullptr), TSR_INVALID_ARGUMENT, "'name' is null");
  EXPECT_ERROR(tsr_model_input_index(model_, nullptr, &n), TSR_INVALID_ARGUMENT, "'name' is null");
  EXPECT_ERROR(tsr_model_input_dtype(nullptr, 0, &dt), TSR_INVALID_ARGUMENT, "'model' is null");
  EXPECT_ERROR(tsr_model_input_shape(model_, 0, dims, 2, nullptr), TSR_INVALID_ARGUMENT, "'rank' is null");
  EXPECT_ERROR(tsr_model_input_shape(model_, 0, nullptr, 2, &rank), TSR_INVALID_ARGUMENT, "'dims' is null");
  EXPECT_ERROR(tsr_session_create(nullptr, nullptr, &session_), TSR_INVALID_ARGUMENT, "'model' is null");
  EXPECT_ERROR(tsr_session_create(model_, nullptr, nullptr), TSR_INVALID_ARGUMENT, "'session' is null");
  EXPECT_ERROR(tsr_session_threads(nullptr, &threads), TSR_INVALID_ARGUMENT, "'session' is null");
  EXPECT_ERROR(tsr_session_set_input(nullptr, 0, TSR_DTYPE_FLOAT32, dims, 2, x, sizeof x), TSR_INVALID_ARGUMENT,
               "'session' is null");
  EXPECT_ERROR(tsr_session_set_input(session_, 0, TSR_DTYPE_FLOAT32, nullptr, 2, x, sizeof x), TSR_INVALID_ARGUMENT,
               "'dims' is null");
  EXPECT_ERROR(tsr_session_set_input(session_, 0, TSR_DTYPE_FLOAT32, dims, 2, nullptr, sizeof x), TSR_INVALID_ARGUMENT,
               "input 'x': 'data' is null");
  EXPECT_ERROR(tsr_session_set_input_shape(nullptr, 0, dims, 2), TSR_INVALID_ARGUMENT, "'session' is null");
  EXPECT_ERROR(tsr_session_set_output_buffer(nullptr, 0, x, sizeof x), TSR_INVALID_ARGUMENT, "'session' is null");
  EXPECT_ERROR(tsr_session_run(nullptr), TSR_INVALID_ARGUMENT, "tsr_session_run: 'session' is null");
  EXPECT_ERROR(tsr_session_output_shape(nullptr, 0, dims, 2, &rank), TSR_INVALID_ARGUMENT, "'session' is null");
  EXPECT_ERROR(tsr_session_output_data(nullptr, 0, &data, &n), TSR_INVALID_ARGUMENT, "'session' is null");
  EXPECT_ERROR(tsr_session_output_data(session_, 0, nullptr, &n), TSR_INVALID_ARGUMENT, "'data' is null");
  EXPECT_ERROR(tsr_session_options_create(nullptr), TSR_INVALID_ARGUMENT, "'options' is null");
  EXPECT_ERROR(tsr_session_options_set_threads(nullptr, 1), TSR_INVALID_ARGUMENT, "'options' is null");
  EXPECT_ERROR(tsr_session_options_set_backends(nullptr, "cpu"), TSR_INVALID_ARGUMENT, "'options' is null");
  EXPECT_ERROR(tsr_session_options_set_memory_limit(nullptr, 1), TSR_INVALID_ARGUMENT, "'options' is null");
  // Destroying NULL is a no-op, as free().
  EXPECT_EQ(tsr_model_destroy(nullptr), TSR_OK);
  EXPECT_EQ(tsr_session_destroy(nullptr), TSR_OK);
  EXPECT_EQ(tsr_session_options_destroy(nullptr), TSR_OK);
}

TEST_F(CApi, WrongInputBufferSizeDtypeAndShape) {
  std::vector<float> x = make_input(3);
  const int64_t dims[2] = {3, kIn};
  EXPECT_ERROR(tsr_session_set_input(session_, 0, TSR_DTYPE_FLOAT32, dims, 2, x.data(), 40), TSR_INVALID_ARGUMENT,
               "input 'x' needs 48 bytes (float[3,4]); 40 were given");
  EXPECT_ERROR(tsr_session_set_input(session_, 0, TSR_DTYPE_FLOAT32, dims, 2, x.data(), 52), TSR_INVALID_ARGUMENT,
               "needs 48 bytes");
  EXPECT_ERROR(tsr_session_set_input(session_, 0, TSR_DTYPE_INT32, dims, 2, x.data(), 48), TSR_INVALID_ARGUMENT,
               "input 'x' has dtype float; int32 was given");
  EXPECT_ERROR(tsr_session_set_input(session_, 0, static_cast<tsr_dtype>(123), dims, 2, x.data(), 48),
               TSR_INVALID_ARGUMENT, "dtype 123 is not a tsr_dtype");
  const int64_t wrong_dim[2] = {4, 3};
  EXPECT_ERROR(tsr_session_set_input(session_, 0, TSR_DTYPE_FLOAT32, wrong_dim, 2, x.data(), 48), TSR_INVALID_ARGUMENT,
               "input 'x' dim 1 is fixed at 4; 3 was given ([4,3])");
  const int64_t rank3[3] = {1, 3, kIn};
  EXPECT_ERROR(tsr_session_set_input(session_, 0, TSR_DTYPE_FLOAT32, rank3, 3, x.data(), 48), TSR_INVALID_ARGUMENT,
               "input 'x' has rank 2; a shape of rank 3 was given");
  const int64_t negative[2] = {-1, kIn};
  EXPECT_ERROR(tsr_session_set_input(session_, 0, TSR_DTYPE_FLOAT32, negative, 2, x.data(), 48), TSR_INVALID_ARGUMENT,
               "input 'x': dim 0 is -1");
  EXPECT_ERROR(tsr_session_set_input(session_, 1, TSR_DTYPE_FLOAT32, dims, 2, x.data(), 48), TSR_INVALID_ARGUMENT,
               "input index 1 is out of range");
  EXPECT_ERROR(tsr_session_set_input_shape(session_, 0, wrong_dim, 2), TSR_INVALID_ARGUMENT, "dim 1 is fixed at 4");
  // None of the above bound anything.
  EXPECT_ERROR(tsr_session_run(session_), TSR_INVALID_ARGUMENT,
               "input 'x' has not been set: call tsr_session_set_input");
}

TEST_F(CApi, RunBeforeInputsAreSet) {
  EXPECT_ERROR(tsr_session_run(session_), TSR_INVALID_ARGUMENT, "input 'x' has not been set");
  const void* data = nullptr;
  size_t bytes = 0;
  EXPECT_ERROR(tsr_session_output_data(session_, 0, &data, &bytes), TSR_INVALID_ARGUMENT, "no successful tsr_session_run");
  // A declared shape alone is not data.
  const int64_t dims[2] = {2, kIn};
  ASSERT_EQ(tsr_session_set_input_shape(session_, 0, dims, 2), TSR_OK) << tsr_last_error();
  EXPECT_ERROR(tsr_session_run(session_), TSR_INVALID_ARGUMENT, "input 'x' has not been set");
}

TEST_F(CApi, InputShapeGivesOutputShapesBeforeTheRun) {
  int64_t dims[2] = {0, 0};
  int32_t rank = 0;
  ASSERT_EQ(tsr_session_output_shape(session_, 1, dims, 2, &rank), TSR_OK);
  EXPECT_EQ(rank, 2);
  EXPECT_EQ(dims[0], -1) << "before any input shape: the declared shape";
  const int64_t in[2] = {7, kIn};
  ASSERT_EQ(tsr_session_set_input_shape(session_, 0, in, 2), TSR_OK) << tsr_last_error();
  ASSERT_EQ(tsr_session_output_shape(session_, 1, dims, 2, &rank), TSR_OK) << tsr_last_error();
  EXPECT_EQ(dims[0], 7);
  EXPECT_EQ(dims[1], kOut);
  // Binding data of another shape replaces the declared one.
  ASSERT_EQ(set_x(2), TSR_OK);
  ASSERT_EQ(tsr_session_output_shape(session_, 0, dims, 2, &rank), TSR_OK);
  EXPECT_EQ(dims[0], 2);
  ASSERT_EQ(tsr_session_run(session_), TSR_OK) << tsr_last_error();
  // A new declared shape unbinds the data of the old one.
  ASSERT_EQ(tsr_session_set_input_shape(session_, 0, in, 2), TSR_OK);
  EXPECT_ERROR(tsr_session_run(session_), TSR_INVALID_ARGUMENT, "input 'x' has not been set");
}

TEST_F(CApi, SessionOptions) {
  tsr_session_options* opts = nullptr;
  ASSERT_EQ(tsr_session_options_create(&opts), TSR_OK);
  EXPECT_ERROR(tsr_session_options_set_backends(opts, "vulkan,tpu"), TSR_INVALID_ARGUMENT,
               "unknown backend 'tpu' in 'vulkan,tpu' (known: cpu, cuda, vulkan)");
  EXPECT_ERROR(tsr_session_options_set_backends(opts, "cpu,,vulkan"), TSR_INVALID_ARGUMENT, "empty name");
  EXPECT_ERROR(tsr_session_options_set_backends(opts, ""), TSR_INVALID_ARGUMENT, "empty name");
  EXPECT_ERROR(tsr_session_options_set_backends(opts, "cpu,cpu"), TSR_INVALID_ARGUMENT, "names 'cpu' twice");
  {
    const std::string huge(1 << 20, 'x');  // the message quotes a bounded part of it
    EXPECT_EQ(tsr_session_options_set_backends(opts, huge.c_str()), TSR_INVALID_ARGUMENT);
    EXPECT_LT(std::strlen(tsr_last_error()), 1024u) << "the error should not echo a 1 MiB argument";
  }
  EXPECT_ERROR(tsr_session_options_set_backends(opts, nullptr), TSR_INVALID_ARGUMENT, "'backends' is null");
  EXPECT_ERROR(tsr_session_options_set_threads(opts, -1), TSR_INVALID_ARGUMENT, "threads is -1");
  EXPECT_ERROR(tsr_session_options_set_threads(opts, 5000), TSR_INVALID_ARGUMENT, "threads is 5000");
  // Vulkan is known but not in this build: skipped for the CPU, which then runs the model.
  ASSERT_EQ(tsr_session_options_set_backends(opts, " vulkan , cpu "), TSR_OK) << tsr_last_error();
  ASSERT_EQ(tsr_session_options_set_threads(opts, 2), TSR_OK);
  tsr_session* s = nullptr;
  ASSERT_EQ(tsr_session_create(model_, opts, &s), TSR_OK) << tsr_last_error();
  int threads = 0;
  ASSERT_EQ(tsr_session_threads(s, &threads), TSR_OK);
  EXPECT_EQ(threads, 2);
  std::vector<float> x = make_input(2);
  const int64_t dims[2] = {2, kIn};
  ASSERT_EQ(tsr_session_set_input(s, 0, TSR_DTYPE_FLOAT32, dims, 2, x.data(), x.size() * 4), TSR_OK);
  ASSERT_EQ(tsr_session_run(s), TSR_OK) << tsr_last_error();
  const void* data = nullptr;
  size_t bytes = 0;
  ASSERT_EQ(tsr_session_output_data(s, 0, &data, &bytes), TSR_OK);
  std::vector<float> y_ref, h_ref;
  reference(x, 2, &y_ref, &h_ref);
  for (int i = 0; i < 2 * kOut; ++i) EXPECT_NEAR(static_cast<const float*>(data)[i], y_ref[i], 1e-5f);
  ASSERT_EQ(tsr_session_destroy(s), TSR_OK);

  // A memory limit below what the plan needs: TSR_OUT_OF_MEMORY, at shape time and at run.
  ASSERT_EQ(tsr_session_options_set_memory_limit(opts, 1), TSR_OK);
  ASSERT_EQ(tsr_session_create(model_, opts, &s), TSR_OK) << tsr_last_error();
  const int64_t big[2] = {64, kIn};
  EXPECT_ERROR(tsr_session_set_input_shape(s, 0, big, 2), TSR_OUT_OF_MEMORY, "more than the limit of 1 bytes");
  ASSERT_EQ(tsr_session_set_input(s, 0, TSR_DTYPE_FLOAT32, dims, 2, x.data(), x.size() * 4), TSR_OK);
  EXPECT_ERROR(tsr_session_run(s), TSR_OUT_OF_MEMORY, "limit of 1 bytes");
  ASSERT_EQ(tsr_session_destroy(s), TSR_OK);
  // The options were copied: destroying them first is fine, and a generous limit runs.
  ASSERT_EQ(tsr_session_options_set_memory_limit(opts, uint64_t{1} << 20), TSR_OK);
  ASSERT_EQ(tsr_session_create(model_, opts, &s), TSR_OK);
  ASSERT_EQ(tsr_session_options_destroy(opts), TSR_OK);
  ASSERT_EQ(tsr_session_set_input(s, 0, TSR_DTYPE_FLOAT32, dims, 2, x.data(), x.size() * 4), TSR_OK);
  EXPECT_EQ(tsr_session_run(s), TSR_OK) << tsr_last_error();
  ASSERT_EQ(tsr_session_destroy(s), TSR_OK);
}

TEST(CApiBasics, LastErrorIsPerThread) {
  size_t n = 0;
  ASSERT_NE(tsr_model_input_count(nullptr, &n), TSR_OK);
  std::string mine = tsr_last_error();
  std::string theirs_before, theirs_after;
  std::thread t([&] {
    theirs_before = tsr_last_error();
    tsr_model* m = nullptr;
    (void)tsr_model_load("/nonexistent/other.tsr", &m);
    theirs_after = tsr_last_error();
  });
  t.join();
  EXPECT_EQ(theirs_before, "") << "a new thread has no error yet";
  EXPECT_NE(theirs_after.find("/nonexistent/other.tsr"), std::string::npos);
  EXPECT_EQ(std::string(tsr_last_error()), mine) << "another thread's error does not replace this one's";
}

TEST_F(CApi, CompilesAndRunsFromC99) {
  char message[512] = "";
  std::vector<float> x = make_input(3), y_ref, h_ref;
  reference(x, 3, &y_ref, &h_ref);
  EXPECT_EQ(tsr_c99_check(path_.c_str(), x.data(), 3, y_ref.data(), message, sizeof message), 0) << message;
  // The check can fail: a wrong expectation is reported.
  y_ref[4] += 0.5f;
  EXPECT_EQ(tsr_c99_check(path_.c_str(), x.data(), 3, y_ref.data(), message, sizeof message), 1);
  EXPECT_NE(std::string(message).find("y[4]"), std::string::npos) << message;
}

}  // namespace
}  // namespace tessera
