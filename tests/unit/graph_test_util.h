// Small builders for hand-made graphs in the planner tests (fusion_test.cc, nchwc_test.cc):
// a value, a node, and int / ints attributes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/graph.h"

namespace tessera::graph_test {

inline Value val(const std::string& name, DType dt = DType::kUndefined) {
  Value v;
  v.name = name;
  v.dtype = dt;
  return v;
}

inline Node node(const std::string& op, std::vector<int> ins, std::vector<int> outs, const std::string& name,
                 int opset = 17) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.opset = opset;
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  return n;
}

inline Attribute ints(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInts;
  a.ints = std::move(v);
  return a;
}

inline Attribute int1(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}

}  // namespace tessera::graph_test
