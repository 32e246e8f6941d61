// TfIdfVectorizer's parsed attributes, shared by its schema (runtime/ops/tf_idf_vectorizer.cc)
// and its reference kernel (backends/cpu/ref/tf_idf_vectorizer.cc), so the two can never
// disagree about the pool or the output size.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"

namespace tessera {

/// The n-gram pool and weighting of one TfIdfVectorizer node (ONNX TfIdfVectorizer-9).
struct TfIdfConfig {
  enum class Mode { kTF, kIDF, kTFIDF };
  /// The pool's n-grams of one size n: `keys` holds count * n values (n-gram i is
  /// keys[i*n .. i*n+n)), sorted lexicographically (the pool holds no n-gram twice); `columns[i]`
  /// is its output column, ngram_indexes[j] for its position j among all the pool's n-grams.
  struct Table {
    std::vector<int64_t> keys;
    std::vector<int64_t> columns;
  };
  Mode mode = Mode::kTF;
  int64_t min_gram_length = 1;
  int64_t max_gram_length = 1;  // clamped to the largest n-gram size the pool has
  int64_t max_skip_count = 0;
  int64_t output_size = 0;      // max(ngram_indexes) + 1 (elements per output row)
  std::vector<float> weights;   // empty: no weights; else one per pool n-gram, >= output_size
  std::vector<Table> tables;    // tables[n - 1] for n = 1..max_gram_length (empty outside [min, max])
};

/// Parses and checks the attributes of TfIdfVectorizer node `node`: mode (TF, IDF, TFIDF),
/// min_gram_length (>= 1), max_gram_length (>= min_gram_length), max_skip_count (>= 0),
/// ngram_counts (non-decreasing start offsets of the 1-grams, 2-grams, ... in the pool, each in
/// [0, pool size], each size's span a multiple of its n), ngram_indexes (one output column in
/// [0, 2^31) per pool n-gram), pool_int64s (no n-gram twice, as onnxruntime requires), weights
/// (optional; when given, one per pool n-gram, as onnxruntime requires, and at least
/// output_size of them: they are read by output column, as onnxruntime and the ONNX reference
/// implementation do, although the spec's text says by pool n-gram). Errors: invalid_argument naming the node for a missing or bad
/// attribute; unimplemented for pool_strings (Tessera holds no string tensors).
Result<TfIdfConfig> parse_tf_idf_config(const Node& node);

}  // namespace tessera
