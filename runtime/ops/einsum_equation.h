// The Einsum equation (ONNX Einsum-12; followed for opsets 12..21), parsed once and shared
// by the schema and the reference kernel. Grammar: terms of letters (a-z, A-Z) and at most
// one "..." each, separated by ',' (one per input), optionally followed by "->" and the
// output term; spaces are ignored. Without "->" the output is the broadcast ellipsis dims
// followed by the letters that appear exactly once, in ASCII order (numpy's implicit mode).
// A letter repeated within one input takes that input's diagonal. Ellipsis dims broadcast
// numpy-style (right-aligned, size 1 stretches); letters must have equal sizes everywhere.
// Labels absent from the output are summed over.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "tessera/graph.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

/// Most distinct labels (letters plus ellipsis dims) an equation may use; the kernel keeps
/// fixed-size index arrays of this size so that it never allocates.
constexpr int kMaxEinsumLabels = 64;

/// An equation resolved against the input shapes. Labels are numbered 0..sizes.size()-1.
struct EinsumPlan {
  std::vector<int64_t> sizes;                      // size of each label
  std::vector<int> out_labels;                     // labels of the output dims, in order
  std::vector<int> sum_labels;                     // labels summed over
  std::vector<std::vector<int64_t>> in_strides;    // per input, per label: element stride (0: absent/broadcast)
  Shape out_shape;
};

/// Parses `equation` for inputs of `shapes`. Errors (invalid_argument, naming the node) on a
/// malformed equation, a term count or rank that does not match the inputs, a label in the
/// output that no input has, a repeated output label, or sizes that disagree.
inline Result<EinsumPlan> plan_einsum(const Node& node, const std::string& equation, const std::vector<Shape>& shapes) {
  auto fail = [&](const std::string& m) { return invalid_argument(node.describe() + ": equation '" + equation + "': " + m); };
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  std::string lhs = eq, rhs;
  const bool explicit_out = eq.find("->") != std::string::npos;
  if (explicit_out) {
    lhs = eq.substr(0, eq.find("->"));
    rhs = eq.substr(eq.find("->") + 2);
  }
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') terms.emplace_back();
    else terms.back() += c;
  }
  if (terms.size() != shapes.size())
    return fail("has " + std::to_string(terms.size()) + " input terms for " + std::to_string(shapes.size()) + " inputs");
  // A term as a list of tokens: a letter's label code (0..51), or -1 for "...".
  auto tokenize = [&](const std::string& t, std::vector<int>& out) -> Status {
    for (size_t i = 0; i < t.size(); ++i) {
      const char c = t[i];
      if (c >= 'A' && c <= 'Z') out.push_back(c - 'A');
      else if (c >= 'a' && c <= 'z') out.push_back(26 + (c - 'a'));
      else if (t.compare(i, 3, "...") == 0) {
        for (int v : out)
          if (v < 0) return fail("a term has more than one '...'");
        out.push_back(-1);
        i += 2;
      } else {
        return fail(std::string("unexpected character '") + c + "'");
      }
    }
    return Status::ok();
  };
  const size_t n = shapes.size();
  std::vector<std::vector<int>> toks(n);
  size_t ell_rank = 0;
  std::vector<size_t> ell_dims(n, 0);
  for (size_t k = 0; k < n; ++k) {
    TSR_RETURN_IF_ERROR(tokenize(terms[k], toks[k]));
    size_t letters = 0;
    bool has_ell = false;
    for (int v : toks[k]) {
      if (v < 0) has_ell = true;
      else ++letters;
    }
    if (has_ell ? shapes[k].size() < letters : shapes[k].size() != letters)
      return fail("term " + std::to_string(k) + " '" + terms[k] + "' does not match input " + std::to_string(k) + " of shape " +
                  shape_to_string(shapes[k]));
    ell_dims[k] = has_ell ? shapes[k].size() - letters : 0;
    ell_rank = std::max(ell_rank, ell_dims[k]);
  }
  if (52 + ell_rank > static_cast<size_t>(kMaxEinsumLabels))
    return unimplemented(node.describe() + ": more than " + std::to_string(kMaxEinsumLabels - 52) + " ellipsis dims");
  // Raw label codes: letters 0..51, ellipsis dim j (of ell_rank, right-aligned) 52 + j.
  std::vector<int64_t> raw_size(52 + ell_rank, -1);
  std::vector<std::vector<int>> dim_code(n);
  for (size_t k = 0; k < n; ++k) {
    size_t d = 0;
    for (int v : toks[k]) {
      if (v >= 0) {
        dim_code[k].push_back(v);
        ++d;
        continue;
      }
      for (size_t j = 0; j < ell_dims[k]; ++j) dim_code[k].push_back(static_cast<int>(52 + ell_rank - ell_dims[k] + j));
      d += ell_dims[k];
    }
    for (size_t d2 = 0; d2 < dim_code[k].size(); ++d2) {
      const int c = dim_code[k][d2];
      const int64_t s = shapes[k][d2];
      int64_t& rs = raw_size[static_cast<size_t>(c)];
      if (c >= 52) {  // ellipsis dims broadcast
        if (rs < 0 || rs == 1) rs = s;
        else if (s != 1 && s != rs) return fail("ellipsis dims of the inputs do not broadcast");
      } else {
        if (rs >= 0 && rs != s)
          return fail(std::string("label '") + static_cast<char>(c < 26 ? 'A' + c : 'a' + c - 26) + "' has sizes " +
                      std::to_string(rs) + " and " + std::to_string(s));
        rs = s;
      }
    }
  }
  // Output codes.
  std::vector<int> out_codes;
  if (explicit_out) {
    std::vector<int> ot;
    TSR_RETURN_IF_ERROR(tokenize(rhs, ot));
    for (int v : ot) {
      if (v < 0) {
        for (size_t j = 0; j < ell_rank; ++j) out_codes.push_back(static_cast<int>(52 + j));
        continue;
      }
      if (raw_size[static_cast<size_t>(v)] < 0)
        return fail(std::string("output label '") + static_cast<char>(v < 26 ? 'A' + v : 'a' + v - 26) + "' is in no input");
      out_codes.push_back(v);
    }
  } else {
    for (size_t j = 0; j < ell_rank; ++j) out_codes.push_back(static_cast<int>(52 + j));
    for (int c = 0; c < 52; ++c) {
      size_t occurrences = 0;  // over all terms, repeats within a term included (numpy)
      for (size_t k = 0; k < n; ++k)
        for (int v : toks[k]) occurrences += v == c;
      if (occurrences == 1) out_codes.push_back(c);
    }
  }
  for (size_t i = 0; i < out_codes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (out_codes[i] == out_codes[j]) return fail("the output repeats a label");
  // Compact label numbering: output labels first, then the summed ones.
  std::vector<int> compact(52 + ell_rank, -1);
  EinsumPlan p;
  for (int c : out_codes) {
    compact[static_cast<size_t>(c)] = static_cast<int>(p.sizes.size());
    p.out_labels.push_back(static_cast<int>(p.sizes.size()));
    p.sizes.push_back(raw_size[static_cast<size_t>(c)]);
    p.out_shape.push_back(raw_size[static_cast<size_t>(c)]);
  }
  for (size_t c = 0; c < raw_size.size(); ++c)
    if (raw_size[c] >= 0 && compact[c] < 0) {
      compact[c] = static_cast<int>(p.sizes.size());
      p.sum_labels.push_back(static_cast<int>(p.sizes.size()));
      p.sizes.push_back(raw_size[c]);
    }
  for (int64_t s : p.sizes)
    if (s < 0) return fail("bad input shape");
  p.in_strides.assign(n, std::vector<int64_t>(p.sizes.size(), 0));
  for (size_t k = 0; k < n; ++k) {
    int64_t stride = 1;
    for (size_t d = dim_code[k].size(); d-- > 0;) {
      const int l = compact[static_cast<size_t>(dim_code[k][d])];
      // A broadcast (size-1) ellipsis dim does not move; a repeated letter adds its strides
      // (the diagonal).
      if (!(shapes[k][d] == 1 && p.sizes[static_cast<size_t>(l)] != 1)) p.in_strides[k][static_cast<size_t>(l)] += stride;
      stride *= shapes[k][d];
    }
  }
  return p;
}

}  // namespace tessera
