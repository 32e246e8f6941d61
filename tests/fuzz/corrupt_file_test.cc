// A real converted model (PP-OCR's direction classifier), truncated at many points and with
// many random bytes flipped: every case must end in an error status, or (a flip that lands
// in zero padding, which no checksum covers) load and give bit-identical outputs. Never a
// crash, a hang or a different answer. The same test is built under AddressSanitizer.
//
// Usage: tessera_corrupt_tests MODEL.tsr   (exits 77 with the reason when MODEL.tsr is
// missing, so ctest reports it as skipped, not passed)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>

#include "tessera/session.h"
#include "tessera/tsr_file.h"

namespace tessera {
namespace {

std::string g_model_path;

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

/// Input of the classifier: x float[1,3,48,192], a fixed smooth pattern.
Tensor make_input() {
  Tensor x = Tensor::allocate(DType::kFloat32, {1, 3, 48, 192}).value();
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = std::sin(0.01f * static_cast<float>(i));
  return x;
}

/// Loads an image from an exactly-sized heap copy (so ASan sees any read past its end) and,
/// if it loads, runs it. Returns the load/run status and the output.
Status load_and_run(const std::vector<uint8_t>& image, const Tensor& x, std::vector<float>* out) {
  std::vector<uint8_t> copy(image);
  TSR_ASSIGN_OR_RETURN(std::shared_ptr<Model> m, read_tsr_buffer(copy.data(), copy.size(), nullptr));
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<Session> s, Session::create(m));
  if (s->inputs().size() != 1) return invalid_file("input count changed");
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> outs, s->run({{s->inputs()[0].name, x}}));
  const float* p = outs[0].data_as<float>();
  out->assign(p, p + outs[0].numel());
  return Status::ok();
}

TEST(CorruptFile, TruncationsAndBitFlipsAreRejected) {
  const std::vector<uint8_t> image = read_all(g_model_path);
  ASSERT_GT(image.size(), 4096u) << g_model_path;
  const Tensor x = make_input();
  std::vector<float> baseline;
  Status base = load_and_run(image, x, &baseline);
  ASSERT_TRUE(base.is_ok()) << base.to_string();

  // Truncation: every length below 256, then 400 lengths spread over the file.
  std::vector<size_t> lengths;
  for (size_t n = 0; n < 256; ++n) lengths.push_back(n);
  for (int k = 0; k <= 400; ++k) lengths.push_back(image.size() * static_cast<size_t>(k) / 401);
  lengths.push_back(image.size() - 1);
  int truncated_rejected = 0;
  for (size_t n : lengths) {
    std::vector<uint8_t> cut(image.begin(), image.begin() + static_cast<long>(n));
    if (cut.empty()) cut.reserve(1);
    std::vector<uint8_t> copy(cut);
    auto r = read_tsr_buffer(copy.empty() ? reinterpret_cast<const uint8_t*>("") : copy.data(), copy.size(), nullptr);
    EXPECT_FALSE(r.is_ok()) << "a file truncated to " << n << " bytes loaded";
    if (!r.is_ok()) {
      ++truncated_rejected;
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidFile) << r.status().to_string();
    }
  }

  // Bit flips: half of them in the FlatBuffer and header region, half anywhere.
  const uint32_t fb_size = image[0] | (image[1] << 8) | (image[2] << 16) | (uint32_t{image[3]} << 24);
  const size_t meta_end = std::min<size_t>(image.size(), (fb_size + 4 + 7) / 8 * 8 + kTsrHeaderCheckBytes);
  std::mt19937 rng(12345);
  int rejected = 0, harmless = 0;
  const int kFlips = 1500;
  for (int i = 0; i < kFlips; ++i) {
    std::vector<uint8_t> bad(image);
    size_t at = (i % 2 == 0) ? rng() % meta_end : rng() % image.size();
    bad[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
    if (i % 5 == 0) bad[rng() % image.size()] ^= static_cast<uint8_t>(rng() | 1);  // some with two flips
    std::vector<float> out;
    Status s = load_and_run(bad, x, &out);
    if (!s.is_ok()) {
      ++rejected;
      EXPECT_FALSE(s.message().empty());
      continue;
    }
    ++harmless;
    EXPECT_EQ(out, baseline) << "a flip at byte " << at << " loaded and changed the answer";
  }
  std::cout << "truncations rejected: " << truncated_rejected << "/" << lengths.size() << "; flips rejected: " << rejected
            << ", harmless (zero padding): " << harmless << " of " << kFlips << "\n";
  EXPECT_GT(rejected, kFlips * 9 / 10);
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::cerr << "usage: tessera_corrupt_tests MODEL.tsr\n";
    return 2;
  }
  tessera::g_model_path = argv[1];
  std::ifstream f(argv[1]);
  if (!f) {
    std::cout << "SKIP: " << argv[1] << " does not exist (scripts/fetch_models.sh fetches the model it is made from)\n";
    return 77;
  }
  return RUN_ALL_TESTS();
}
