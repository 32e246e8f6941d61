// TfIdfVectorizer reference kernel (runtime/ops/tf_idf_vectorizer.cc; ONNX TfIdfVectorizer-9,
// with the semantics of onnxruntime's kernel, which the ONNX reference implementation ports).
// For each row x[0..C) of X and each skip distance s = 1 .. max_skip_count + 1, every start
// position i and every size n in [start_n, max_gram_length] with i + (n-1)*s < C, the n-gram
//   (x[i], x[i + s], ..., x[i + (n-1)*s])
// adds 1 to count[column] when the pool holds it (column = its ngram_indexes entry), where
// start_n = min_gram_length for s = 1 and max(min_gram_length, 2) after (unigrams do not
// depend on s, so they are counted once). Then, per output column j:
//   TF:    Y[j] = count[j]
//   IDF:   Y[j] = count[j] > 0 ? (weights ? weights[j] : 1) : 0
//   TFIDF: Y[j] = count[j] * (weights ? weights[j] : 1)
// Counts are int64 in scratch (output_size of them, one row at a time), so they are exact
// before the one rounding to float. Pool lookups are binary searches over the sorted tables
// of TfIdfConfig, reading the n-gram straight from X (no allocation at run time).
#include <algorithm>

#include "backends/cpu/ref/ref_kernels.h"
#include "runtime/ops/tf_idf_vectorizer.h"

namespace tessera::ref {

namespace {

/// Reads X's element i as int64 (X is int32 or int64).
struct Row {
  const int32_t* i32;
  const int64_t* i64;
  int64_t at(int64_t i) const { return i32 ? i32[i] : i64[i]; }
};

/// The output column of the n-gram (row[i], row[i + s], ..., row[i + (n-1)s]) in `t`, or -1.
int64_t find_ngram(const TfIdfConfig::Table& t, int64_t n, const Row& row, int64_t i, int64_t s) {
  int64_t lo = 0, hi = static_cast<int64_t>(t.columns.size());
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const int64_t* key = t.keys.data() + mid * n;
    int cmp = 0;
    for (int64_t j = 0; j < n && cmp == 0; ++j) {
      const int64_t v = row.at(i + j * s);
      cmp = key[j] < v ? -1 : (key[j] > v ? 1 : 0);
    }
    if (cmp == 0) return t.columns[static_cast<size_t>(mid)];
    if (cmp < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

}  // namespace

Result<std::unique_ptr<Kernel>> make_TfIdfVectorizer(const CompileContext& ctx) {
  TSR_ASSIGN_OR_RETURN(TfIdfConfig cfg, parse_tf_idf_config(ctx.node));
  const Shape xs = ctx.input(0).shape;
  const bool is_i32 = ctx.input(0).dtype == DType::kInt32;
  const int64_t rows = xs.size() == 2 ? xs[0] : 1, cols = xs.back();
  const size_t scratch = static_cast<size_t>(cfg.output_size) * sizeof(int64_t);
  return make_fn_kernel(
      [cfg = std::move(cfg), is_i32, rows, cols](const KernelContext& k) -> Status {
        int64_t* count = static_cast<int64_t*>(k.scratch);
        float* y = k.output(0).data_as<float>();
        const int64_t out = cfg.output_size, max_n = cfg.max_gram_length;
        // A skip distance s >= C fits no n-gram of size >= 2, so larger ones need no pass
        // (and max_skip_count + 1 could overflow).
        const int64_t last_skip = std::min<int64_t>(cfg.max_skip_count, std::max<int64_t>(cols - 2, 0)) + 1;
        for (int64_t r = 0; r < rows; ++r) {
          Row row{is_i32 ? k.input(0).data_as<int32_t>() + r * cols : nullptr,
                  is_i32 ? nullptr : k.input(0).data_as<int64_t>() + r * cols};
          std::fill(count, count + out, int64_t{0});
          for (int64_t s = 1; s <= last_skip; ++s) {
            const int64_t start_n = s == 1 ? cfg.min_gram_length : std::max<int64_t>(cfg.min_gram_length, 2);
            if (start_n > max_n) break;
            for (int64_t i = 0; i < cols; ++i)
              for (int64_t n = start_n; n <= max_n && i + (n - 1) * s < cols; ++n) {
                const int64_t col = find_ngram(cfg.tables[static_cast<size_t>(n - 1)], n, row, i, s);
                if (col >= 0) ++count[col];
              }
          }
          float* yr = y + r * out;
          const bool w = !cfg.weights.empty();
          for (int64_t j = 0; j < out; ++j) {
            const float weight = w ? cfg.weights[static_cast<size_t>(j)] : 1.0f;
            switch (cfg.mode) {
              case TfIdfConfig::Mode::kTF: yr[j] = static_cast<float>(count[j]); break;
              case TfIdfConfig::Mode::kIDF: yr[j] = count[j] > 0 ? weight : 0.0f; break;
              case TfIdfConfig::Mode::kTFIDF: yr[j] = static_cast<float>(count[j]) * weight; break;
            }
          }
        }
        return Status::ok();
      },
      scratch);
}

}  // namespace tessera::ref
