// TfIdfVectorizer (ONNX opset 9; the only version up to opset 22): counts, for each row of
// X, the n-grams of the attribute pool it contains, taking every skip distance 1 ..
// max_skip_count + 1 between an n-gram's items (unigrams once), and writes the counts
// weighted by mode into Y float32.
//   X [C] -> Y [output_size];  X [B, C] -> Y [B, output_size];  X int32 or int64.
//   output_size = max(ngram_indexes) + 1.
// String inputs and pool_strings are unsupported (Tessera holds no string tensors). The
// attribute checks are in parse_tf_idf_config (runtime/ops/tf_idf_vectorizer.h); the counting
// and weighting are in the kernel (backends/cpu/ref/tf_idf_vectorizer.cc).
#include "runtime/ops/tf_idf_vectorizer.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "runtime/ops/op_schema.h"

namespace tessera {

namespace {

Status fail(const Node& node, const std::string& msg) { return invalid_argument(node.describe() + ": " + msg); }

Result<int64_t> required_int(const Node& node, const char* name) {
  const Attribute* a = node.find_attr(name);
  if (!a || a->type != AttrType::kInt) return fail(node, std::string("attribute ") + name + " (int) is required");
  return a->i;
}

// Largest output column accepted: keeps output rows well inside every size computation.
constexpr int64_t kMaxColumn = (int64_t{1} << 31) - 1;

}  // namespace

Result<TfIdfConfig> parse_tf_idf_config(const Node& node) {
  TfIdfConfig cfg;
  const Attribute* mode = node.find_attr("mode");
  if (!mode || mode->type != AttrType::kString) return fail(node, "attribute mode (TF, IDF or TFIDF) is required");
  if (mode->s == "TF") cfg.mode = TfIdfConfig::Mode::kTF;
  else if (mode->s == "IDF") cfg.mode = TfIdfConfig::Mode::kIDF;
  else if (mode->s == "TFIDF") cfg.mode = TfIdfConfig::Mode::kTFIDF;
  else return fail(node, "mode '" + mode->s + "' is not TF, IDF or TFIDF");
  TSR_ASSIGN_OR_RETURN(cfg.min_gram_length, required_int(node, "min_gram_length"));
  TSR_ASSIGN_OR_RETURN(cfg.max_gram_length, required_int(node, "max_gram_length"));
  TSR_ASSIGN_OR_RETURN(cfg.max_skip_count, required_int(node, "max_skip_count"));
  if (cfg.min_gram_length < 1) return fail(node, "min_gram_length must be >= 1, got " + std::to_string(cfg.min_gram_length));
  if (cfg.max_gram_length < cfg.min_gram_length)
    return fail(node, "max_gram_length " + std::to_string(cfg.max_gram_length) + " is less than min_gram_length " +
                          std::to_string(cfg.min_gram_length));
  if (cfg.max_skip_count < 0) return fail(node, "max_skip_count must be >= 0, got " + std::to_string(cfg.max_skip_count));

  if (const Attribute* ps = node.find_attr("pool_strings"); ps && !ps->strings.empty())
    return unimplemented(node.describe() + ": pool_strings (string input) is not supported; only int32/int64 input "
                                           "with pool_int64s");
  const Attribute* pool_attr = node.find_attr("pool_int64s");
  if (!pool_attr || pool_attr->type != AttrType::kInts) return fail(node, "attribute pool_int64s is required");
  const std::vector<int64_t>& pool = pool_attr->ints;
  const Attribute* counts_attr = node.find_attr("ngram_counts");
  if (!counts_attr || counts_attr->type != AttrType::kInts || counts_attr->ints.empty())
    return fail(node, "attribute ngram_counts (a non-empty list of ints) is required");
  const std::vector<int64_t>& counts = counts_attr->ints;
  const Attribute* idx_attr = node.find_attr("ngram_indexes");
  if (!idx_attr || idx_attr->type != AttrType::kInts || idx_attr->ints.empty())
    return fail(node, "attribute ngram_indexes (a non-empty list of ints) is required");
  const std::vector<int64_t>& indexes = idx_attr->ints;

  // Split the pool by n-gram size: the n-grams of size n = i + 1 are pool[counts[i] .. next).
  const int64_t pool_size = static_cast<int64_t>(pool.size());
  int64_t total = 0;
  std::vector<std::pair<int64_t, int64_t>> spans;  // (start, number of n-grams) per size
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t start = counts[i];
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : pool_size;
    if (start < 0 || start > pool_size || end < start || end > pool_size)
      return fail(node, "ngram_counts must be non-decreasing offsets in [0, " + std::to_string(pool_size) +
                            "] (the size of pool_int64s); entry " + std::to_string(i) + " is " + std::to_string(start));
    const int64_t n = static_cast<int64_t>(i) + 1;
    if ((end - start) % n != 0)
      return fail(node, "the pool holds " + std::to_string(end - start) + " values for " + std::to_string(n) +
                            "-grams (from ngram_counts), not a multiple of " + std::to_string(n));
    spans.emplace_back(start, (end - start) / n);
    total += (end - start) / n;
  }
  if (static_cast<int64_t>(indexes.size()) != total)
    return fail(node, "ngram_indexes has " + std::to_string(indexes.size()) + " values but the pool holds " +
                          std::to_string(total) + " n-grams");
  for (int64_t v : indexes)
    if (v < 0 || v > kMaxColumn)
      return fail(node, "ngram_indexes value " + std::to_string(v) + " is outside [0, 2^31)");
  cfg.output_size = *std::max_element(indexes.begin(), indexes.end()) + 1;
  if (const Attribute* w = node.find_attr("weights"); w && w->type == AttrType::kFloats && !w->floats.empty()) {
    // One weight per pool n-gram (onnxruntime requires it), read by output column (so the
    // output may not have more columns than that).
    if (w->floats.size() != indexes.size() || static_cast<int64_t>(w->floats.size()) < cfg.output_size)
      return fail(node, "weights has " + std::to_string(w->floats.size()) + " values; it needs one per pool n-gram (" +
                            std::to_string(indexes.size()) + ") and at least one per output column (" +
                            std::to_string(cfg.output_size) + ", max(ngram_indexes) + 1)");
    cfg.weights = w->floats;
  }

  // Sizes beyond the pool's largest can never match.
  cfg.max_gram_length = std::min<int64_t>(cfg.max_gram_length, static_cast<int64_t>(counts.size()));
  cfg.tables.resize(static_cast<size_t>(std::max<int64_t>(cfg.max_gram_length, 0)));
  int64_t first_id = 0;  // position of the first n-gram of this size among all the pool's n-grams
  for (size_t i = 0; i < spans.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1, start = spans[i].first, num = spans[i].second;
    if (n >= cfg.min_gram_length && n <= cfg.max_gram_length && num > 0) {
      // Sort n-gram positions lexicographically; a repeated n-gram is an error (onnxruntime
      // rejects it too; the ONNX reference implementation silently keeps the last).
      std::vector<int64_t> order(static_cast<size_t>(num));
      std::iota(order.begin(), order.end(), 0);
      auto key = [&](int64_t j) { return pool.begin() + start + j * n; };
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return std::lexicographical_compare(key(a), key(a) + n, key(b), key(b) + n); });
      TfIdfConfig::Table& t = cfg.tables[static_cast<size_t>(n - 1)];
      for (size_t j = 0; j < order.size(); ++j) {
        const int64_t id = order[j];
        if (j + 1 < order.size() && std::equal(key(id), key(id) + n, key(order[j + 1])))
          return fail(node, "pool_int64s holds the same " + std::to_string(n) + "-gram twice (n-grams " +
                                std::to_string(first_id + std::min(id, order[j + 1])) + " and " +
                                std::to_string(first_id + std::max(id, order[j + 1])) + ")");
        t.keys.insert(t.keys.end(), key(id), key(id) + n);
        t.columns.push_back(indexes[static_cast<size_t>(first_id + id)]);
      }
    }
    first_id += num;
  }
  return cfg;
}

namespace {

Status infer(InferContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype == DType::kString)
    return ctx.unsupported("string input is not supported; only int32 and int64 input (with pool_int64s)");
  if (x.dtype != DType::kInt32 && x.dtype != DType::kInt64)
    return ctx.error(std::string("X must be int32 or int64 (or string), got ") + dtype_name(x.dtype));
  if (x.shape.size() != 1 && x.shape.size() != 2)
    return ctx.error("X must be [C] or [B, C], got " + shape_to_string(x.shape));
  TSR_ASSIGN_OR_RETURN(TfIdfConfig cfg, parse_tf_idf_config(ctx.node()));
  ctx.output(0).dtype = DType::kFloat32;
  ctx.output(0).shape = x.shape.size() == 1 ? Shape{cfg.output_size} : Shape{x.shape[0], cfg.output_size};
  return Status::ok();
}

}  // namespace

const OpSchema kSchema_TfIdfVectorizer = {"TfIdfVectorizer", 1, 1, 1, 1, infer};

}  // namespace tessera
