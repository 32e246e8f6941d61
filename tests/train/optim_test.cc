// Optimizers, schedules, clipping and the Trainer, against the formulas written out by hand
// (torch.optim.SGD / AdamW semantics, see train/optim.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "graph_builder.h"
#include "tessera/tsr_file.h"
#include "train/optim.h"
#include "train/trainer.h"

namespace tessera::train {
namespace {

using namespace testing;

Tensor scalar_vec(std::vector<float> v) {
  Tensor t = Tensor::allocate(DType::kFloat32, {static_cast<int64_t>(v.size())}).value();
  for (size_t i = 0; i < v.size(); ++i) t.data_as<float>()[i] = v[i];
  return t;
}

TEST(Optim, SgdNesterovWeightDecayByHand) {
  OptimizerConfig c;
  c.momentum = 0.9;
  c.nesterov = true;
  c.weight_decay = 0.1;
  std::vector<Param> ps = {{"w", scalar_vec({1.0f}), {}}};
  double w = 1.0, b = 0;
  const double grads[] = {0.5, -0.2, 0.3};
  for (int s = 0; s < 3; ++s) {
    ASSERT_TRUE(optimizer_step(c, ps, {scalar_vec({static_cast<float>(grads[s])})}, 0.1, s).is_ok());
    double g = grads[s] + 0.1 * w;
    b = s == 0 ? g : 0.9 * b + g;
    w -= 0.1 * (g + 0.9 * b);
    EXPECT_NEAR(ps[0].value.data_as<float>()[0], w, 1e-6) << "step " << s;
  }
  ASSERT_EQ(ps[0].state.size(), 1u);
  EXPECT_EQ(ps[0].state[0].first, "momentum_buffer");
  EXPECT_NEAR(ps[0].state[0].second.data_as<float>()[0], b, 1e-6);
}

TEST(Optim, AdamWByHand) {
  OptimizerConfig c;
  c.kind = "adamw";
  c.weight_decay = 0.01;
  std::vector<Param> ps = {{"w", scalar_vec({0.5f, -1.0f}), {}}};
  double w[2] = {0.5, -1.0}, m[2] = {0, 0}, v[2] = {0, 0};
  const double g[3][2] = {{0.1, -0.3}, {0.2, 0.05}, {-0.4, 0.01}};
  for (int s = 0; s < 3; ++s) {
    ASSERT_TRUE(optimizer_step(c, ps, {scalar_vec({static_cast<float>(g[s][0]), static_cast<float>(g[s][1])})}, 0.01, s).is_ok());
    for (int k = 0; k < 2; ++k) {
      w[k] *= 1 - 0.01 * 0.01;
      m[k] = 0.9 * m[k] + 0.1 * g[s][k];
      v[k] = 0.999 * v[k] + 0.001 * g[s][k] * g[s][k];
      w[k] -= 0.01 * (m[k] / (1 - std::pow(0.9, s + 1))) / (std::sqrt(v[k] / (1 - std::pow(0.999, s + 1))) + 1e-8);
      EXPECT_NEAR(ps[0].value.data_as<float>()[k], w[k], 1e-6) << "step " << s << " element " << k;
    }
  }
}

TEST(Optim, BadConfigAndShapes) {
  OptimizerConfig c;
  c.kind = "rmsprop";
  EXPECT_FALSE(validate(c).is_ok());
  c.kind = "sgd";
  c.nesterov = true;
  EXPECT_FALSE(validate(c).is_ok());  // Nesterov without momentum
  c.nesterov = false;
  std::vector<Param> ps = {{"w", scalar_vec({1.0f, 2.0f}), {}}};
  Status s = optimizer_step(c, ps, {scalar_vec({1.0f})}, 0.1, 0);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("'w'"), std::string::npos) << s.message();
}

TEST(Optim, ClipGlobalNorm) {
  std::vector<Tensor> g = {scalar_vec({3.0f}), scalar_vec({4.0f, 0.0f})};
  EXPECT_NEAR(clip_grad_global_norm(g, 1.0), 5.0, 1e-6);
  EXPECT_NEAR(g[0].data_as<float>()[0], 3.0 / (5.0 + 1e-6), 1e-6);
  EXPECT_NEAR(g[1].data_as<float>()[0], 4.0 / (5.0 + 1e-6), 1e-6);
  std::vector<Tensor> h = {scalar_vec({0.3f})};
  clip_grad_global_norm(h, 1.0);  // under the limit: unchanged
  EXPECT_FLOAT_EQ(h[0].data_as<float>()[0], 0.3f);
}

TEST(Optim, WarmupCosine) {
  EXPECT_DOUBLE_EQ(lr_at(1.0, 0, 100, 10, true), 0.1);
  EXPECT_DOUBLE_EQ(lr_at(1.0, 9, 100, 10, true), 1.0);
  EXPECT_DOUBLE_EQ(lr_at(1.0, 10, 100, 10, true), 1.0);
  EXPECT_NEAR(lr_at(1.0, 55, 100, 10, true), 0.5, 1e-12);  // half way through the decay
  EXPECT_NEAR(lr_at(1.0, 100, 100, 10, true), 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(lr_at(0.3, 50, 100, 0, false), 0.3);
}

// A linear model y = x W^T + b (Gemm) in a Model, float32.
std::shared_ptr<Model> linear_model(std::mt19937& gen) {
  Builder b;
  int x = b.input("x", DType::kFloat32);
  int w = b.init("W", random_tensor(DType::kFloat32, {3, 4}, gen));
  int bias = b.init("B", random_tensor(DType::kFloat32, {3}, gen));
  int y = b.node("Gemm", {x, w, bias}, {ai("transB", 1)}, 1, "", DType::kFloat32)[0];
  b.output(y);
  auto m = std::make_shared<Model>();
  m->graph = b.g;
  m->meta.opset_imports = {{"", 17}};
  return m;
}

TEST(Trainer, FreezeKeepsWeightsAndCheckpointResumesExactly) {
  std::mt19937 gen(5);
  auto model = linear_model(gen);
  Tensor x = random_tensor(DType::kFloat32, {6, 4}, gen);
  Tensor y = Tensor::allocate(DType::kInt64, {6}).value();
  for (int i = 0; i < 6; ++i) y.data_as<int64_t>()[i] = i % 3;
  TrainerConfig cfg;
  cfg.optimizer.kind = "adamw";
  cfg.freeze = "^B$";
  auto t = Trainer::create(*model, cfg);
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  ASSERT_EQ((*t)->params().size(), 1u);
  EXPECT_EQ((*t)->params()[0].name, "W");
  ASSERT_EQ((*t)->frozen().size(), 1u);
  for (int s = 0; s < 2; ++s) ASSERT_TRUE((*t)->train_step(x, y, 0.01).is_ok());
  const std::string path = ::testing::TempDir() + "/trainer_ckpt.tsr";
  ASSERT_TRUE((*t)->save(path).is_ok());
  // The frozen bias is unchanged in the checkpoint.
  auto ck = read_tsr_file(path);
  ASSERT_TRUE(ck.is_ok()) << ck.status().to_string();
  const Graph& g = (*ck)->graph;
  const Tensor& b0 = *model->graph.values[model->graph.find_value("B")].initializer;
  const Tensor& b1 = *g.values[g.find_value("B")].initializer;
  EXPECT_EQ(0, std::memcmp(b0.data(), b1.data(), b0.nbytes()));
  EXPECT_TRUE(g.values[g.find_value("W")].trainable);
  EXPECT_FALSE(g.values[g.find_value("B")].trainable);
  // Resume and continue: identical to going on without the checkpoint.
  auto r = Trainer::create(**ck, cfg);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)->step(), 2);
  for (int s = 0; s < 3; ++s) {
    auto l1 = (*t)->train_step(x, y, 0.01);
    auto l2 = (*r)->train_step(x, y, 0.01);
    ASSERT_TRUE(l1.is_ok() && l2.is_ok());
    EXPECT_EQ(*l1, *l2);
  }
  const Tensor& w1 = (*t)->params()[0].value;
  const Tensor& w2 = (*r)->params()[0].value;
  EXPECT_EQ(0, std::memcmp(w1.data(), w2.data(), w1.nbytes()));
  std::remove(path.c_str());
}

TEST(Trainer, ReplaceHeadAndErrors) {
  std::mt19937 gen(6);
  auto model = linear_model(gen);
  TrainerConfig cfg;
  cfg.replace_head = 7;
  auto t = Trainer::create(*model, cfg);
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  Tensor x = random_tensor(DType::kFloat32, {2, 4}, gen);
  Tensor y = Tensor::allocate(DType::kInt64, {2}).value();
  y.data_as<int64_t>()[0] = 6;  // class 6 exists only after the new head
  auto e = (*t)->evaluate(x, y);
  ASSERT_TRUE(e.is_ok()) << e.status().to_string();
  EXPECT_EQ(e->output.shape(), (Shape{2, 7}));
  cfg.replace_head = 0;
  cfg.freeze = "[";
  EXPECT_EQ(Trainer::create(*model, cfg).status().code(), StatusCode::kInvalidArgument);
  cfg.freeze = "";
  cfg.loss = "hinge";
  EXPECT_EQ(Trainer::create(*model, cfg).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::train

namespace tessera::train {
namespace {
using namespace testing;

// BatchNormalization in training mode: batch statistics, and running statistics updated as
// running * momentum + batch * (1 - momentum) (ONNX BatchNormalization-15), saved with the model.
TEST(Trainer, BatchNormTrainingModeUpdatesRunningStats) {
  std::mt19937 gen(9);
  Builder b;
  int x = b.input("x", DType::kFloat32);
  Tensor mean0 = random_tensor(DType::kFloat32, {2}, gen), var0 = random_tensor(DType::kFloat32, {2}, gen, 0.5, 1.5);
  int bn = b.node("BatchNormalization", {x, b.init("s", random_tensor(DType::kFloat32, {2}, gen)), b.init("bb", random_tensor(DType::kFloat32, {2}, gen)),
                                         b.init("m", mean0), b.init("v", var0)}, {af("momentum", 0.8f)}, 1, "", DType::kFloat32)[0];
  int f = b.node("Flatten", {bn}, {}, 1, "", DType::kFloat32)[0];
  int y = b.node("Gemm", {f, b.init("W", random_tensor(DType::kFloat32, {3, 8}, gen))}, {ai("transB", 1)}, 1, "", DType::kFloat32)[0];
  b.output(y);
  Model m;
  m.graph = b.g;
  m.meta.opset_imports = {{"", 17}};
  Tensor xs = random_tensor(DType::kFloat32, {5, 2, 2, 2}, gen, -2, 3);
  Tensor ys = Tensor::allocate(DType::kInt64, {5}).value();
  for (int i = 0; i < 5; ++i) ys.data_as<int64_t>()[i] = i % 3;
  auto t = Trainer::create(m, TrainerConfig{});
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  ASSERT_TRUE((*t)->train_step(xs, ys, 0.01).is_ok());
  auto snap = (*t)->snapshot();
  const Graph& g = snap->graph;
  for (int c = 0; c < 2; ++c) {
    double mu = 0, var = 0;
    for (int n = 0; n < 5; ++n)
      for (int p = 0; p < 4; ++p) mu += xs.data_as<float>()[(n * 2 + c) * 4 + p];
    mu /= 20;
    for (int n = 0; n < 5; ++n)
      for (int p = 0; p < 4; ++p) var += std::pow(xs.data_as<float>()[(n * 2 + c) * 4 + p] - mu, 2);
    var /= 20;
    EXPECT_NEAR(g.values[g.find_value("m")].initializer->data_as<float>()[c], 0.8 * mean0.data_as<float>()[c] + 0.2 * mu, 1e-5);
    EXPECT_NEAR(g.values[g.find_value("v")].initializer->data_as<float>()[c], 0.8 * var0.data_as<float>()[c] + 0.2 * var, 1e-5);
  }
  // BatchNormalization's scale and bias are trained, its statistics are not parameters.
  std::vector<std::string> names;
  for (const Param& p : (*t)->params()) names.push_back(p.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"W", "bb", "s"}));
}

}  // namespace
}  // namespace tessera::train

namespace tessera::train {
namespace {
using namespace testing;

// The TrainingState table round trip (writer and reader), and the reader's checks on it.
TEST(Checkpoint, TrainingStateRoundTripAndChecks) {
  std::mt19937 gen(11);
  auto model = linear_model(gen);
  auto ts = std::make_shared<TrainingState>();
  ts->optimizer = "adamw";
  ts->step = 17;
  Tensor m = random_tensor(DType::kFloat32, {3, 4}, gen);
  ts->states.push_back({"W", "exp_avg", std::make_shared<const Tensor>(m)});
  model->training = ts;
  auto bytes = serialize_tsr(*model);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto back = read_tsr_buffer(bytes->data(), bytes->size(), nullptr);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  ASSERT_TRUE((*back)->training);
  EXPECT_TRUE((*back)->extras.training_state);
  EXPECT_EQ((*back)->training->optimizer, "adamw");
  EXPECT_EQ((*back)->training->step, 17);
  ASSERT_EQ((*back)->training->states.size(), 1u);
  const Tensor& got = *(*back)->training->states[0].data;
  EXPECT_EQ(got.shape(), (Shape{3, 4}));
  EXPECT_EQ(0, std::memcmp(got.data(), m.data(), m.nbytes()));
  // A state for a value that is not an initializer is rejected when read.
  auto bad = std::make_shared<TrainingState>(*ts);
  bad->states[0].value = "x";
  model->training = bad;
  auto bad_bytes = serialize_tsr(*model);
  ASSERT_TRUE(bad_bytes.is_ok());
  auto r = read_tsr_buffer(bad_bytes->data(), bad_bytes->size(), nullptr);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidFile);
  EXPECT_NE(r.status().message().find("optimizer state 'x/exp_avg'"), std::string::npos) << r.status().message();
  // A state whose size does not match its parameter is rejected too.
  auto wrong = std::make_shared<TrainingState>(*ts);
  wrong->states[0].data = std::make_shared<const Tensor>(random_tensor(DType::kFloat32, {5}, gen));
  model->training = wrong;
  auto wrong_bytes = serialize_tsr(*model);
  ASSERT_TRUE(wrong_bytes.is_ok());
  EXPECT_EQ(read_tsr_buffer(wrong_bytes->data(), wrong_bytes->size(), nullptr).status().code(), StatusCode::kInvalidFile);
  // Resuming with another optimizer than the checkpoint's is refused.
  model->training = ts;
  TrainerConfig cfg;  // sgd
  auto t = Trainer::create(*model, cfg);
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("adamw"), std::string::npos);
}

}  // namespace
}  // namespace tessera::train
