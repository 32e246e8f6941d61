// Boxing (train/boxing.h): the placement -> collective table, the collective nodes'
// training kernels (float32/float64, over the mesh dim's registered communicator) and
// their gradient rules (the transposes).
#include "train/boxing.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "train/data_parallel.h"
#include "train/grad_rules.h"
#include "train/kernels.h"

namespace tessera::train {

const char* collective_op_type(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "AllReduce";
    case Collective::kReduceScatter: return "ReduceScatter";
    case Collective::kAllGather: return "AllGather";
    case Collective::kAllToAll: return "AllToAll";
    case Collective::kSlice: return "ShardSlice";
    case Collective::kCopyToParallel: return "CopyToParallel";
    case Collective::kNone: break;
  }
  return "none";
}

Result<BoxingStep> plan_boxing(const Placement& from, const Placement& to) {
  BoxingStep s;
  if (from == to) return s;
  if (from.kind == PlacementKind::kPartial && from.reduce != PartialReduce::kSum)
    return invalid_argument("boxing " + from.describe() + " -> " + to.describe() + ": only Partial(sum) is reduced");
  switch (from.kind) {
    case PlacementKind::kPartial:
      if (to.kind == PlacementKind::kBroadcast) s.op = Collective::kAllReduce;
      if (to.kind == PlacementKind::kSplit) { s.op = Collective::kReduceScatter; s.axis = to.split_dim; }
      break;
    case PlacementKind::kSplit:
      if (to.kind == PlacementKind::kBroadcast) { s.op = Collective::kAllGather; s.axis = from.split_dim; }
      if (to.kind == PlacementKind::kSplit) { s.op = Collective::kAllToAll; s.axis = from.split_dim; s.to_axis = to.split_dim; }
      break;
    case PlacementKind::kBroadcast:
      if (to.kind == PlacementKind::kSplit) { s.op = Collective::kSlice; s.axis = to.split_dim; }
      break;
  }
  if (s.op == Collective::kNone)
    return invalid_argument("boxing " + from.describe() + " -> " + to.describe() + ": no collective makes a Partial value");
  return s;
}

Result<std::vector<BoxingStep>> plan_boxing(const std::vector<Placement>& from, const std::vector<Placement>& to) {
  if (from.size() != to.size())
    return invalid_argument("boxing: " + std::to_string(from.size()) + " placements into " + std::to_string(to.size()) + " mesh dims");
  std::vector<BoxingStep> steps;
  for (size_t d = 0; d < from.size(); ++d) {
    auto s = plan_boxing(from[d], to[d]);
    if (!s.is_ok()) return s.status().with_context("mesh dim " + std::to_string(d));
    if (s->op == Collective::kNone) continue;
    s->mesh_dim = static_cast<int>(d);
    steps.push_back(*s);
  }
  return steps;
}

Collective transpose_collective(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return Collective::kNone;  // identity
    case Collective::kCopyToParallel: return Collective::kAllReduce;
    case Collective::kAllGather: return Collective::kSlice;
    case Collective::kSlice: return Collective::kAllGather;
    case Collective::kReduceScatter: return Collective::kAllGather;
    case Collective::kAllToAll: return Collective::kAllToAll;
    case Collective::kNone: break;
  }
  return Collective::kNone;
}

namespace {

Attribute int_attr(const std::string& n, int64_t v) {
  Attribute a;
  a.name = n;
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}

std::vector<Attribute> step_attrs(const BoxingStep& s) {
  std::vector<Attribute> at = {int_attr("mesh_dim", s.mesh_dim)};
  if (s.op == Collective::kAllGather || s.op == Collective::kReduceScatter || s.op == Collective::kSlice ||
      s.op == Collective::kAllToAll)
    at.push_back(int_attr("axis", s.axis));
  if (s.op == Collective::kAllToAll) at.push_back(int_attr("to_axis", s.to_axis));
  return at;
}

std::string unique_name(const Graph& g, const std::string& base) {
  if (g.find_value(base) < 0) return base;
  for (int i = 1;; ++i)
    if (g.find_value(base + "." + std::to_string(i)) < 0) return base + "." + std::to_string(i);
}

std::map<int, Communicator*>& registry() {
  static std::map<int, Communicator*> r;
  return r;
}

std::map<int, uint64_t>& payloads() {
  static std::map<int, uint64_t> p;
  return p;
}

}  // namespace

int add_boxing_node(Graph& g, int in, const BoxingStep& step, const std::string& name) {
  Node n;
  n.op_type = collective_op_type(step.op);
  n.domain = kTrainDomain;
  n.opset = 1;
  n.name = name;
  n.inputs = {in};
  n.attributes = step_attrs(step);
  Value v;
  v.name = unique_name(g, g.values[in].name + "/" + n.op_type);
  v.dtype = g.values[in].dtype;
  n.outputs = {g.add_value(std::move(v))};
  g.nodes.push_back(std::move(n));
  return g.nodes.back().outputs[0];
}

void set_mesh_communicator(int mesh_dim, Communicator* comm) {
  payloads()[mesh_dim] = 0;
  if (comm) registry()[mesh_dim] = comm;
  else registry().erase(mesh_dim);
}

uint64_t mesh_all_reduce_payload_bytes(int mesh_dim) {
  auto it = payloads().find(mesh_dim);
  return it == payloads().end() ? 0 : it->second;
}

Communicator* mesh_communicator(int mesh_dim) {
  auto it = registry().find(mesh_dim);
  return it == registry().end() ? nullptr : it->second;
}

// ---- kernels ----
namespace {

Communicator& comm_of(const KernelArgs& a) {
  const int64_t d = a.node.attr_i("mesh_dim", -1);
  Communicator* c = mesh_communicator(static_cast<int>(d));
  if (!c) throw KernelError("no communicator is registered for mesh dim " + std::to_string(d));
  return *c;
}

void check(const Status& s) {
  if (!s.is_ok()) throw KernelError(s.message());
}

const Tensor& float_input(const KernelArgs& a) {
  const Tensor& x = a.x(0);
  if (x.dtype() != DType::kFloat32 && x.dtype() != DType::kFloat64)
    throw KernelError(std::string("collectives take float32 or float64, got ") + dtype_name(x.dtype()));
  return x;
}

int64_t axis_of(const KernelArgs& a, const char* name, const Tensor& x) {
  return norm_axis(a.node.attr_i(name, 0), static_cast<int64_t>(x.rank()));
}

// Copies the block of shape `block` at `src_off` in src (shape ss) to `dst_off` in dst
// (shape ds); elements of `es` bytes.
void copy_block(const void* src, const Shape& ss, const std::vector<int64_t>& src_off, void* dst, const Shape& ds,
                const std::vector<int64_t>& dst_off, const Shape& block, size_t es) {
  const auto sst = strides_of(ss), dst_st = strides_of(ds);
  int64_t s0 = 0, d0 = 0;
  for (size_t i = 0; i < block.size(); ++i) {
    s0 += src_off[i] * sst[i];
    d0 += dst_off[i] * dst_st[i];
  }
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  for_each_offset(block, {sst, dst_st}, [&](int64_t, const int64_t* off) {
    std::memcpy(d + (d0 + off[1]) * es, s + (s0 + off[0]) * es, es);
  });
}

std::vector<int64_t> zeros(size_t n) { return std::vector<int64_t>(n, 0); }

// Every rank's length along `axis` (an all-gather of one int64 per rank).
std::vector<int64_t> all_lengths(Communicator& c, int64_t mine) {
  std::vector<int64_t> all(static_cast<size_t>(c.size()));
  check(c.all_gather(&mine, all.data(), 1, DType::kInt64));
  return all;
}

void k_all_reduce(KernelArgs& a) {
  const Tensor& x = float_input(a);
  Tensor y = alloc(x.dtype(), x.shape());
  check(comm_of(a).all_reduce(x.data(), y.data(), x.numel(), x.dtype(), ReduceOp::kSum));
  payloads()[static_cast<int>(a.node.attr_i("mesh_dim", -1))] += x.nbytes();
  a.out[0] = std::move(y);
}

void k_copy_to_parallel(KernelArgs& a) { a.out[0] = float_input(a); }

void k_shard_slice(KernelArgs& a) {
  const Tensor& x = float_input(a);
  Communicator& c = comm_of(a);
  auto y = shard_slice(x, static_cast<int>(a.node.attr_i("axis", 0)), c.size(), c.rank());
  check(y.status());
  a.out[0] = std::move(y).value();
}

void k_all_gather(KernelArgs& a) {
  const Tensor& x = float_input(a);
  auto y = all_gather_tensor(comm_of(a), x, static_cast<int>(a.node.attr_i("axis", 0)));
  check(y.status());
  a.out[0] = std::move(y).value();
}

void k_reduce_scatter(KernelArgs& a) {
  const Tensor& x = float_input(a);
  Communicator& c = comm_of(a);
  const int64_t ax = axis_of(a, "axis", x);
  const size_t es = dtype_size(x.dtype());
  const int64_t len = x.dim(ax);
  Shape ps = x.shape();
  ps[ax] = split_rows(len, c.size(), 0).second;  // the longest slice
  const int64_t chunk = numel_of(ps);
  Shape ss = ps;
  ss.insert(ss.begin(), c.size());
  Tensor send = alloc(x.dtype(), ss);
  for (int r = 0; r < c.size(); ++r) {
    auto [b, e] = split_rows(len, c.size(), r);
    Shape bs = x.shape();
    bs[ax] = e - b;
    auto soff = zeros(bs.size());
    soff[ax] = b;
    copy_block(x.data(), x.shape(), soff, static_cast<char*>(send.data()) + r * chunk * es, ps, zeros(ps.size()), bs, es);
  }
  Tensor recv = alloc(x.dtype(), ps);
  check(c.reduce_scatter(send.data(), recv.data(), chunk, x.dtype(), ReduceOp::kSum));
  auto [b, e] = split_rows(len, c.size(), c.rank());
  Shape os = x.shape();
  os[ax] = e - b;
  Tensor y = alloc(x.dtype(), os);
  copy_block(recv.data(), ps, zeros(ps.size()), y.data(), os, zeros(os.size()), os, es);
  a.out[0] = std::move(y);
}

void k_all_to_all(KernelArgs& a) {
  const Tensor& x = float_input(a);
  Communicator& c = comm_of(a);
  const int64_t ai = axis_of(a, "axis", x), aj = axis_of(a, "to_axis", x);
  if (ai == aj) throw KernelError("AllToAll: axis and to_axis are the same dim");
  const size_t es = dtype_size(x.dtype());
  const int n = c.size(), me = c.rank();
  const auto li = all_lengths(c, x.dim(ai));
  const int64_t lj = x.dim(aj);
  Shape cs = x.shape();  // one chunk: dim i padded to the longest local length, dim j to the longest slice
  cs[ai] = *std::max_element(li.begin(), li.end());
  cs[aj] = split_rows(lj, n, 0).second;
  const int64_t chunk = numel_of(cs);
  Tensor send = alloc(x.dtype(), Shape{n * chunk});
  for (int q = 0; q < n; ++q) {
    auto [b, e] = split_rows(lj, n, q);
    Shape bs = x.shape();
    bs[aj] = e - b;
    auto soff = zeros(bs.size());
    soff[aj] = b;
    copy_block(x.data(), x.shape(), soff, static_cast<char*>(send.data()) + q * chunk * es, cs, zeros(cs.size()), bs, es);
  }
  Tensor recv = alloc(x.dtype(), Shape{n * chunk});
  check(c.all_to_all(send.data(), recv.data(), chunk, x.dtype()));
  auto [jb, je] = split_rows(lj, n, me);
  Shape os = x.shape();
  os[ai] = 0;
  for (int64_t l : li) os[ai] += l;
  os[aj] = je - jb;
  Tensor y = alloc(x.dtype(), os);
  int64_t at = 0;
  for (int r = 0; r < n; ++r) {
    Shape bs = os;
    bs[ai] = li[r];
    auto doff = zeros(os.size());
    doff[ai] = at;
    copy_block(static_cast<const char*>(recv.data()) + r * chunk * es, cs, zeros(cs.size()), y.data(), os, doff, bs, es);
    at += li[r];
  }
  a.out[0] = std::move(y);
}

}  // namespace

Result<Tensor> shard_slice(const Tensor& x, int axis, int parts, int index) {
  const int64_t r = static_cast<int64_t>(x.rank());
  if (axis < -r || axis >= r) return invalid_argument("shard_slice: axis " + std::to_string(axis) + " outside rank " + std::to_string(r));
  if (parts < 1 || index < 0 || index >= parts) return invalid_argument("shard_slice: slice " + std::to_string(index) + " of " + std::to_string(parts));
  const int64_t ax = axis < 0 ? axis + r : axis;
  auto [b, e] = split_rows(x.dim(ax), parts, index);
  Shape bs = x.shape();
  bs[ax] = e - b;
  TSR_ASSIGN_OR_RETURN(Tensor y, Tensor::allocate(x.dtype(), bs));
  auto off = zeros(bs.size());
  off[ax] = b;
  copy_block(x.data(), x.shape(), off, y.data(), bs, zeros(bs.size()), bs, dtype_size(x.dtype()));
  return y;
}

Result<Tensor> all_gather_tensor(Communicator& c, const Tensor& x, int axis) {
  const int64_t rk = static_cast<int64_t>(x.rank());
  if (axis < -rk || axis >= rk) return invalid_argument("all-gather: axis " + std::to_string(axis) + " outside rank " + std::to_string(rk));
  const int64_t ax = axis < 0 ? axis + rk : axis;
  const size_t es = dtype_size(x.dtype());
  std::vector<int64_t> lens(static_cast<size_t>(c.size()));
  int64_t mine = x.dim(ax);
  TSR_RETURN_IF_ERROR(c.all_gather(&mine, lens.data(), 1, DType::kInt64));
  const int64_t mx = *std::max_element(lens.begin(), lens.end());
  Shape ps = x.shape();
  ps[ax] = mx;
  TSR_ASSIGN_OR_RETURN(Tensor send, Tensor::allocate(x.dtype(), ps));
  copy_block(x.data(), x.shape(), zeros(ps.size()), send.data(), ps, zeros(ps.size()), x.shape(), es);
  Shape rs = ps;
  rs.insert(rs.begin(), c.size());
  TSR_ASSIGN_OR_RETURN(Tensor recv, Tensor::allocate(x.dtype(), rs));
  TSR_RETURN_IF_ERROR(c.all_gather(send.data(), recv.data(), send.numel(), x.dtype()));
  Shape os = x.shape();
  os[ax] = 0;
  for (int64_t l : lens) os[ax] += l;
  TSR_ASSIGN_OR_RETURN(Tensor y, Tensor::allocate(x.dtype(), os));
  int64_t at = 0;
  for (int r = 0; r < c.size(); ++r) {
    Shape bs = x.shape();
    bs[ax] = lens[r];
    auto doff = zeros(os.size());
    doff[ax] = at;
    copy_block(static_cast<const char*>(recv.data()) + r * send.numel() * es, ps, zeros(ps.size()), y.data(), os, doff, bs, es);
    at += lens[r];
  }
  return y;
}

namespace {

// ---- vocab-parallel embedding (Megatron-LM's VocabParallelEmbedding) ----

// Rows [first, end) of the global table of `vocab` rows that this rank holds.
std::pair<int64_t, int64_t> vocab_rows(const KernelArgs& a) {
  Communicator& c = comm_of(a);
  const int64_t vocab = a.node.attr_i("vocab", -1);
  if (vocab < 1) throw KernelError("VocabParallelGather needs the global row count 'vocab'");
  return split_rows(vocab, c.size(), c.rank());
}

// Global id (ONNX Gather-13: negative ids count from the end) of ids[i].
int64_t global_id(const Tensor& ids, int64_t i, int64_t vocab) {
  int64_t id = ids.dtype() == DType::kInt64 ? ids.data_as<int64_t>()[i] : ids.data_as<int32_t>()[i];
  if (id < 0) id += vocab;
  if (id < 0 || id >= vocab) throw KernelError("id " + std::to_string(id) + " outside the table of " + std::to_string(vocab) + " rows");
  return id;
}

void k_vocab_gather(KernelArgs& a) {
  const Tensor& table = a.x(0);
  const Tensor& ids = a.x(1);
  if (table.rank() != 2) throw KernelError("VocabParallelGather: the table must be [rows, H], got " + table.describe());
  if (ids.dtype() != DType::kInt64 && ids.dtype() != DType::kInt32) throw KernelError("VocabParallelGather: ids must be int32/int64");
  const auto [first, end] = vocab_rows(a);
  if (table.dim(0) != end - first) throw KernelError("VocabParallelGather: the table slice has " + std::to_string(table.dim(0)) + " rows, expected " + std::to_string(end - first));
  const int64_t h = table.dim(1), vocab = a.node.attr_i("vocab", -1);
  const size_t es = dtype_size(table.dtype());
  Shape os = ids.shape();
  os.push_back(h);
  Tensor y = alloc(table.dtype(), os);  // zeros: rows of ids other ranks hold
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t id = global_id(ids, i, vocab);
    if (id < first || id >= end) continue;
    std::memcpy(static_cast<char*>(y.data()) + i * h * es, static_cast<const char*>(table.data()) + (id - first) * h * es, h * es);
  }
  a.out[0] = std::move(y);
}

// d table_local[r] = sum of dy rows whose id is first + r.
void k_vocab_gather_grad(KernelArgs& a) {
  const Tensor& dy = a.x(0);
  const Tensor& ids = a.x(1);
  const auto [first, end] = vocab_rows(a);
  const int64_t h = dy.dim(static_cast<int64_t>(dy.rank()) - 1), vocab = a.node.attr_i("vocab", -1);
  Tensor g = alloc(dy.dtype(), {end - first, h});
  float_dispatch(dy.dtype(), a.node, [&](auto t) {
    using T = decltype(t);
    for (int64_t i = 0; i < ids.numel(); ++i) {
      const int64_t id = global_id(ids, i, vocab);
      if (id < first || id >= end) continue;
      for (int64_t k = 0; k < h; ++k) g.data_as<T>()[(id - first) * h + k] += dy.data_as<T>()[i * h + k];
    }
  });
  a.out[0] = std::move(g);
}

// ---- gradient rules: the transposes ----
Status grad_all_reduce(GradContext& c) {
  c.set(0, c.onnx("Identity", {c.dy(0)}));
  return Status::ok();
}

template <Collective kTo>
Status grad_transposed(GradContext& c) {
  std::vector<Attribute> at = {GradContext::attr_i("mesh_dim", c.node().attr_i("mesh_dim", 0))};
  if (kTo != Collective::kAllReduce) at.push_back(GradContext::attr_i("axis", c.node().attr_i("axis", 0)));
  c.set(0, c.add(collective_op_type(kTo), {c.dy(0)}, at));
  return Status::ok();
}

Status grad_all_to_all(GradContext& c) {
  c.set(0, c.add("AllToAll", {c.dy(0)},
                 {GradContext::attr_i("mesh_dim", c.node().attr_i("mesh_dim", 0)),
                  GradContext::attr_i("axis", c.node().attr_i("to_axis", 0)), GradContext::attr_i("to_axis", c.node().attr_i("axis", 0))}));
  return Status::ok();
}

std::string key(Collective c) { return std::string(kTrainDomain) + ":" + collective_op_type(c); }

Status grad_vocab_gather(GradContext& c) {
  if (c.wants(0))
    c.set(0, c.add("VocabParallelGatherGrad", {c.dy(0), c.in(1)},
                   {GradContext::attr_i("mesh_dim", c.node().attr_i("mesh_dim", 0)), GradContext::attr_i("vocab", c.node().attr_i("vocab", -1))}));
  return Status::ok();
}

}  // namespace

void register_collective_kernels(KernelTable& t) {
  t[key(Collective::kAllReduce)] = k_all_reduce;
  t[key(Collective::kCopyToParallel)] = k_copy_to_parallel;
  t[key(Collective::kSlice)] = k_shard_slice;
  t[key(Collective::kAllGather)] = k_all_gather;
  t[key(Collective::kReduceScatter)] = k_reduce_scatter;
  t[key(Collective::kAllToAll)] = k_all_to_all;
  t[std::string(kTrainDomain) + ":VocabParallelGather"] = k_vocab_gather;
  t[std::string(kTrainDomain) + ":VocabParallelGatherGrad"] = k_vocab_gather_grad;
}

void register_collective_grads(GradRuleTable& t) {
  t[key(Collective::kAllReduce)] = grad_all_reduce;
  t[key(Collective::kCopyToParallel)] = grad_transposed<Collective::kAllReduce>;
  t[key(Collective::kAllGather)] = grad_transposed<Collective::kSlice>;
  t[key(Collective::kSlice)] = grad_transposed<Collective::kAllGather>;
  t[key(Collective::kReduceScatter)] = grad_transposed<Collective::kAllGather>;
  t[key(Collective::kAllToAll)] = grad_all_to_all;
  t[std::string(kTrainDomain) + ":VocabParallelGather"] = grad_vocab_gather;
}

}  // namespace tessera::train
