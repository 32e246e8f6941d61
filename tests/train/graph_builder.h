// Small helpers to build Graph IR by hand in the training tests.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "tessera/graph.h"

namespace tessera::train::testing {

inline Attribute ai(const std::string& n, int64_t v) { Attribute a; a.name = n; a.type = AttrType::kInt; a.i = v; return a; }
inline Attribute af(const std::string& n, float v) { Attribute a; a.name = n; a.type = AttrType::kFloat; a.f = v; return a; }
inline Attribute as(const std::string& n, const std::string& v) { Attribute a; a.name = n; a.type = AttrType::kString; a.s = v; return a; }
inline Attribute aints(const std::string& n, std::vector<int64_t> v) { Attribute a; a.name = n; a.type = AttrType::kInts; a.ints = std::move(v); return a; }

struct Builder {
  Graph g;
  int opset = 17;
  int input(const std::string& name, DType dt = DType::kFloat64) {
    Value v; v.name = name; v.dtype = dt;
    int id = g.add_value(std::move(v));
    g.inputs.push_back(id);
    return id;
  }
  int init(const std::string& name, Tensor t) {
    Value v; v.name = name; v.dtype = t.dtype(); v.has_shape = true;
    for (int64_t d : t.shape()) v.shape.push_back(Dim{d, ""});
    v.initializer = std::make_shared<Tensor>(std::move(t));
    return g.add_value(std::move(v));
  }
  int ints(const std::string& name, std::vector<int64_t> xs) {
    Tensor t = Tensor::allocate(DType::kInt64, {static_cast<int64_t>(xs.size())}).value();
    for (size_t i = 0; i < xs.size(); ++i) t.data_as<int64_t>()[i] = xs[i];
    return init(name, std::move(t));
  }
  std::vector<int> node(const std::string& op, std::vector<int> ins, std::vector<Attribute> attrs = {}, size_t outs = 1,
                        const std::string& domain = "", DType dt = DType::kFloat64) {
    Node n;
    n.op_type = op; n.domain = domain; n.opset = domain.empty() ? opset : 1;
    n.name = op + std::to_string(g.nodes.size());
    n.inputs = std::move(ins);
    n.attributes = std::move(attrs);
    for (size_t k = 0; k < outs; ++k) {
      Value v; v.name = n.name + "_out" + std::to_string(k); v.dtype = dt;
      n.outputs.push_back(g.add_value(std::move(v)));
    }
    std::vector<int> o = n.outputs;
    g.nodes.push_back(std::move(n));
    return o;
  }
  int op(const std::string& op, std::vector<int> ins, std::vector<Attribute> attrs = {}) { return node(op, std::move(ins), std::move(attrs))[0]; }
  void output(int v) { g.outputs.push_back(v); }
  const std::string& name(int v) const { return g.values[v].name; }
};

inline Tensor random_tensor(DType dt, const Shape& s, std::mt19937& gen, double lo = -1, double hi = 1) {
  Tensor t = Tensor::allocate(dt, s).value();
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dt == DType::kFloat64) t.data_as<double>()[i] = u(gen);
    else t.data_as<float>()[i] = static_cast<float>(u(gen));
  }
  return t;
}

}  // namespace tessera::train::testing
