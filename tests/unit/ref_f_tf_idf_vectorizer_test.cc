// TfIdfVectorizer reference kernel (backends/cpu/ref/tf_idf_vectorizer.cc): skips, unigrams
// counted once, min/max gram length, modes and weights by output column, batches, duplicate
// pool entries (an error), empty input, and bad attributes.
#include <gtest/gtest.h>

#include <cstdint>

#include "op_test_util.h"

namespace tessera {
namespace {

using testing::attr_floats;
using testing::attr_i;
using testing::attr_ints;
using testing::attr_s;
using testing::make_tensor;
using testing::run1;
using testing::run_op;
using testing::to_vector;

std::vector<Attribute> tfidf_attrs(const std::string& mode, int64_t min_n, int64_t max_n, int64_t skip,
                                   std::vector<int64_t> counts, std::vector<int64_t> indexes, std::vector<int64_t> pool) {
  return {attr_s("mode", mode),          attr_i("min_gram_length", min_n),       attr_i("max_gram_length", max_n),
          attr_i("max_skip_count", skip), attr_ints("ngram_counts", std::move(counts)),
          attr_ints("ngram_indexes", std::move(indexes)), attr_ints("pool_int64s", std::move(pool))};
}

std::vector<float> run_tfidf(const std::vector<Attribute>& attrs, const Tensor& x) {
  return to_vector<float>(run1({"TfIdfVectorizer", attrs, 9}, {&x}));
}

// The spec's example: [94, 17, 36, 12, 28]; with 2 skips (distance 3) the bigrams are
// (94, 12) and (17, 28); without skips (94, 17), (17, 36), (36, 12), (12, 28).
TEST(RefTfIdfVectorizer, BigramsWithSkips) {
  Tensor x = make_tensor<int32_t>({5}, {94, 17, 36, 12, 28});
  const std::vector<int64_t> pool = {94, 12, 17, 28, 94, 17};  // three bigrams, no unigrams
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 2, 2, 0, {0, 0}, {0, 1, 2}, pool), x), (std::vector<float>{0, 0, 1}));
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 2, 2, 1, {0, 0}, {0, 1, 2}, pool), x), (std::vector<float>{0, 0, 1}));
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 2, 2, 2, {0, 0}, {0, 1, 2}, pool), x), (std::vector<float>{1, 1, 1}));
  // Skips beyond the row's length change nothing.
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 2, 2, 1000000000, {0, 0}, {0, 1, 2}, pool), x), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 2, 2, INT64_MAX, {0, 0}, {0, 1, 2}, pool), x), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 1, INT64_MAX, INT64_MAX, {0, 0}, {0, 1, 2}, pool), x), (std::vector<float>{1, 1, 1}));
}

// X = [5, 5, 6]; pool unigrams 5, 6 and bigram (5, 6). Unigrams count once (2 and 1); the
// bigram occurs at distance 1 and 2 (2). min/max_gram_length select the sizes.
TEST(RefTfIdfVectorizer, UnigramsCountOnceAndGramLengthsSelect) {
  Tensor x = make_tensor<int64_t>({3}, {5, 5, 6});
  const std::vector<int64_t> pool = {5, 6, 5, 6};
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 1, 2, 1, {0, 2}, {0, 1, 2}, pool), x), (std::vector<float>{2, 1, 2}));
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 2, 2, 1, {0, 2}, {0, 1, 2}, pool), x), (std::vector<float>{0, 0, 2}));
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 1, 1, 1, {0, 2}, {0, 1, 2}, pool), x), (std::vector<float>{2, 1, 0}));
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 1, 2, 0, {0, 2}, {0, 1, 2}, pool), x), (std::vector<float>{2, 1, 1}));
  // max_gram_length past the pool's largest size is harmless.
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 1, 7, 1, {0, 2}, {0, 1, 2}, pool), x), (std::vector<float>{2, 1, 2}));
}

// Pool unigrams 5, 6, 7 go to columns 2, 0, 1. X = [5, 5, 7]: column 2 counts 2, column 1
// counts 1. Weights scale by output column (onnxruntime and the ONNX reference do so).
TEST(RefTfIdfVectorizer, ModesAndWeightsByColumn) {
  Tensor x = make_tensor<int32_t>({3}, {5, 5, 7});
  auto attrs = [](const std::string& mode, bool weights) {
    auto a = tfidf_attrs(mode, 1, 1, 0, {0}, {2, 0, 1}, {5, 6, 7});
    if (weights) a.push_back(attr_floats("weights", {0.5f, 2.0f, 3.0f}));
    return a;
  };
  EXPECT_EQ(run_tfidf(attrs("TF", false), x), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(run_tfidf(attrs("TF", true), x), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(run_tfidf(attrs("IDF", false), x), (std::vector<float>{0, 1, 1}));
  EXPECT_EQ(run_tfidf(attrs("IDF", true), x), (std::vector<float>{0, 2, 3}));
  EXPECT_EQ(run_tfidf(attrs("TFIDF", false), x), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(run_tfidf(attrs("TFIDF", true), x), (std::vector<float>{0, 2, 6}));
}

// Each row of a [B, C] input is its own document; columns no n-gram maps to stay 0.
TEST(RefTfIdfVectorizer, BatchRowsAndUnusedColumns) {
  Tensor x = make_tensor<int64_t>({3, 4}, {1, 2, 1, 2, 3, 3, 3, 3, 2, 1, 9, 9});
  auto a = tfidf_attrs("TF", 1, 2, 0, {0, 2}, {0, 4, 2}, {1, 2, 1, 2});
  Tensor y = run1({"TfIdfVectorizer", a, 9}, {&x});
  ASSERT_EQ(y.shape(), (Shape{3, 5}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{2, 0, 2, 0, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1}));
}

TEST(RefTfIdfVectorizer, EmptyInputGivesZeros) {
  Tensor empty = make_tensor<int32_t>({0}, {});
  EXPECT_EQ(run_tfidf(tfidf_attrs("TF", 1, 1, 0, {0}, {0, 1}, {5, 6}), empty), (std::vector<float>{0, 0}));
  Tensor empty_rows = make_tensor<int32_t>({2, 0}, {});
  Tensor y = run1({"TfIdfVectorizer", tfidf_attrs("TF", 1, 1, 0, {0}, {0, 1}, {5, 6}), 9}, {&empty_rows});
  ASSERT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 0, 0, 0}));
}

TEST(RefTfIdfVectorizer, BadInputsAreErrorsNamingTheNode) {
  Tensor x = make_tensor<int32_t>({3}, {1, 2, 3});
  auto expect_error = [&](const std::vector<Attribute>& a, const char* needle, const Tensor* in = nullptr,
                          StatusCode code = StatusCode::kInvalidArgument) {
    auto r = run_op({"TfIdfVectorizer", a, 9}, {in ? in : &x});
    ASSERT_FALSE(r.is_ok()) << needle;
    EXPECT_EQ(r.status().code(), code) << r.status().to_string();
    EXPECT_NE(r.status().to_string().find("test_TfIdfVectorizer"), std::string::npos) << r.status().to_string();
    EXPECT_NE(r.status().to_string().find(needle), std::string::npos) << r.status().to_string();
  };
  const auto good = tfidf_attrs("TF", 1, 2, 0, {0, 2}, {0, 1, 2}, {1, 2, 1, 2});
  ASSERT_TRUE(run_op({"TfIdfVectorizer", good, 9}, {&x}).is_ok());
  expect_error(tfidf_attrs("BM25", 1, 2, 0, {0, 2}, {0, 1, 2}, {1, 2, 1, 2}), "mode");
  expect_error({good.begin() + 1, good.end()}, "mode");
  expect_error(tfidf_attrs("TF", 0, 2, 0, {0, 2}, {0, 1, 2}, {1, 2, 1, 2}), "min_gram_length");
  expect_error(tfidf_attrs("TF", 2, 1, 0, {0, 2}, {0, 1, 2}, {1, 2, 1, 2}), "max_gram_length");
  expect_error(tfidf_attrs("TF", 1, 2, -1, {0, 2}, {0, 1, 2}, {1, 2, 1, 2}), "max_skip_count");
  expect_error(tfidf_attrs("TF", 1, 2, 0, {0, 5}, {0, 1, 2}, {1, 2, 1, 2}), "ngram_counts");
  expect_error(tfidf_attrs("TF", 1, 2, 0, {2, 0}, {0, 1, 2}, {1, 2, 1, 2}), "ngram_counts");
  expect_error(tfidf_attrs("TF", 1, 2, 0, {0, 1}, {0, 1, 2}, {1, 2, 1, 2}), "multiple of 2");
  expect_error(tfidf_attrs("TF", 1, 2, 0, {0, 2}, {0, 1}, {1, 2, 1, 2}), "ngram_indexes");
  expect_error(tfidf_attrs("TF", 1, 2, 0, {0, 2}, {0, -1, 2}, {1, 2, 1, 2}), "ngram_indexes");
  expect_error(tfidf_attrs("TF", 1, 2, 0, {0, 2}, {0, 1, int64_t{1} << 40}, {1, 2, 1, 2}), "ngram_indexes");
  // The same n-gram twice in the pool (onnxruntime rejects it too); a repeated value across
  // sizes (unigram 1 and bigram (1, 2)) is fine.
  expect_error(tfidf_attrs("TF", 1, 2, 0, {0, 2}, {0, 1, 2, 3}, {1, 2, 3, 4, 3, 4}), "twice");
  expect_error(tfidf_attrs("TF", 1, 1, 0, {0}, {0, 1, 2}, {5, 6, 5}), "twice");
  auto short_w = good;
  short_w.push_back(attr_floats("weights", {1.0f, 2.0f}));
  expect_error(short_w, "weights");
  // One weight per pool n-gram, and no more output columns than weights.
  auto long_w = good;
  long_w.push_back(attr_floats("weights", {1.0f, 2.0f, 3.0f, 4.0f}));
  expect_error(long_w, "weights");
  auto wide = tfidf_attrs("TF", 1, 2, 0, {0, 2}, {0, 1, 5}, {1, 2, 1, 2});
  ASSERT_TRUE(run_op({"TfIdfVectorizer", wide, 9}, {&x}).is_ok());
  wide.push_back(attr_floats("weights", {1.0f, 2.0f, 3.0f}));
  expect_error(wide, "weights");
  auto strings = good;
  Attribute ps;
  ps.name = "pool_strings";
  ps.type = AttrType::kStrings;
  ps.strings = {"a", "b"};
  strings.push_back(ps);
  expect_error(strings, "pool_strings", nullptr, StatusCode::kUnimplemented);
  Tensor xf = make_tensor<float>({3}, {1, 2, 3});
  expect_error(good, "int32 or int64", &xf);
  Tensor x3 = make_tensor<int32_t>({1, 1, 3}, {1, 2, 3});
  expect_error(good, "[C] or [B, C]", &x3);
}

}  // namespace
}  // namespace tessera
