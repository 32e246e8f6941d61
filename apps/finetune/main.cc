// tessera-finetune: trains a .tsr model on .npz data in one process (train/trainer.h).
//
//   tessera-finetune --model IN.tsr --train TRAIN.npz --val VAL.npz --epochs 10 --batch-size 32
//       --lr 0.01 --optimizer sgd|adamw --loss ce|mse --out OUT.tsr [--replace-head CLASSES]
//       [--freeze REGEX] [--resume CKPT.tsr] ...
//
// Data: each .npz (np.savez) holds "x" (the model input batch, [N, ...], float32/float64/uint8,
// converted to float32) and "y" (int64 class ids [N] for ce, float targets for mse).
// Output: a progress bar (stderr), one JSON object per step and per epoch in the metrics file
// (--metrics, default OUT.tsr.metrics.jsonl), checkpoints (--checkpoint, default
// OUT.ckpt.tsr; written atomically every --checkpoint-every steps and after each epoch), the
// trained model OUT.tsr (weights, optimizer state, step), and a final line with the
// validation loss and accuracy. Exit status 0 on success, 1 on any error (the message names
// the flag, file or node), 2 on a bad command line.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <numeric>
#include <random>

#include "apps/finetune/npz.h"
#include "tessera/tsr_file.h"
#include "train/trainer.h"

using namespace tessera;

namespace {

struct Data {
  Tensor x, y;
  int64_t n = 0;
};

Result<Tensor> to_dtype(const Tensor& t, DType dt, const std::string& what) {
  if (t.dtype() == dt) return t;
  TSR_ASSIGN_OR_RETURN(Tensor o, Tensor::allocate(dt, t.shape()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v;
    switch (t.dtype()) {
      case DType::kFloat32: v = t.data_as<float>()[i]; break;
      case DType::kFloat64: v = t.data_as<double>()[i]; break;
      case DType::kUInt8: v = t.data_as<uint8_t>()[i]; break;
      case DType::kInt32: v = t.data_as<int32_t>()[i]; break;
      case DType::kInt64: v = static_cast<double>(t.data_as<int64_t>()[i]); break;
      default: return invalid_argument(what + ": dtype " + dtype_name(t.dtype()) + " is not supported");
    }
    if (dt == DType::kFloat32) o.data_as<float>()[i] = static_cast<float>(v);
    else o.data_as<int64_t>()[i] = static_cast<int64_t>(v);
  }
  return o;
}

Result<Data> load_data(const std::string& path, const std::string& flag, bool ce) {
  TSR_ASSIGN_OR_RETURN(auto arrays, read_npz(path));
  if (!arrays.count("x") || !arrays.count("y"))
    return invalid_argument(flag + " '" + path + "': needs arrays 'x' (inputs) and 'y' (targets)");
  Data d;
  TSR_ASSIGN_OR_RETURN(d.x, to_dtype(arrays["x"], DType::kFloat32, flag + " '" + path + "' x"));
  TSR_ASSIGN_OR_RETURN(d.y, to_dtype(arrays["y"], ce ? DType::kInt64 : DType::kFloat32, flag + " '" + path + "' y"));
  if (d.x.rank() < 1 || d.y.rank() < 1 || d.x.dim(0) != d.y.dim(0) || d.x.dim(0) == 0)
    return invalid_argument(flag + " '" + path + "': x " + d.x.describe() + " and y " + d.y.describe() + " must have the same number (> 0) of rows");
  if (ce && d.y.rank() != 1) return invalid_argument(flag + " '" + path + "': y must be class ids [N] for --loss ce, got " + d.y.describe());
  d.n = d.x.dim(0);
  return d;
}

// Rows idx[b0, b1) of t, as a new tensor.
Tensor gather_rows(const Tensor& t, const std::vector<int64_t>& idx, size_t b0, size_t b1) {
  Shape s = t.shape();
  s[0] = static_cast<int64_t>(b1 - b0);
  Tensor o = Tensor::allocate(t.dtype(), s).value();
  const size_t row = t.nbytes() / t.dim(0);
  for (size_t i = b0; i < b1; ++i)
    std::memcpy(static_cast<char*>(o.data()) + (i - b0) * row, static_cast<const char*>(t.data()) + idx[i] * row, row);
  return o;
}

std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 gen(seed * 1000003ULL + static_cast<uint64_t>(epoch));
  std::shuffle(idx.begin(), idx.end(), gen);
  return idx;
}

struct ValResult {
  double loss = 0, accuracy = -1;
};

Result<ValResult> validate_all(train::Trainer& t, const Data& d, int64_t bs, bool ce) {
  std::vector<int64_t> idx(d.n);
  std::iota(idx.begin(), idx.end(), 0);
  ValResult r;
  int64_t correct = 0;
  for (int64_t b = 0; b < d.n; b += bs) {
    const size_t e = static_cast<size_t>(std::min(d.n, b + bs));
    Tensor x = gather_rows(d.x, idx, b, e), y = gather_rows(d.y, idx, b, e);
    TSR_ASSIGN_OR_RETURN(auto ev, t.evaluate(x, y));
    r.loss += ev.loss * static_cast<double>(e - b);
    if (ce) {
      const Tensor& o = ev.output;
      const int64_t c = o.numel() / o.dim(0);
      for (int64_t i = 0; i < o.dim(0); ++i) {
        const float* row = o.data_as<float>() + i * c;
        if (std::max_element(row, row + c) - row == y.data_as<int64_t>()[i]) ++correct;
      }
    }
  }
  r.loss /= static_cast<double>(d.n);
  if (ce) r.accuracy = static_cast<double>(correct) / static_cast<double>(d.n);
  return r;
}

std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessera-finetune: train a .tsr model on .npz data"};
  std::string model_path, train_path, val_path, out_path, metrics_path, ckpt_path, resume_path, freeze, optimizer = "sgd", loss = "ce";
  int epochs = 10, replace_head = 0;
  int64_t batch = 32, max_steps = -1, ckpt_every = 0, warmup = 0;
  double lr = 0.01, momentum = 0, wd = 0, smoothing = 0, clip = 0;
  bool nesterov = false, cosine = false, quiet = false, bn_eval = false;
  uint64_t seed = 0;
  app.add_option("--model", model_path, "input model (.tsr)");
  app.add_option("--resume", resume_path, "resume from this checkpoint (.tsr written by tessera-finetune) instead of --model");
  app.add_option("--train", train_path, "training data (.npz with x and y)")->required();
  app.add_option("--val", val_path, "validation data (.npz with x and y)")->required();
  app.add_option("--out", out_path, "trained model (.tsr)")->required();
  app.add_option("--epochs", epochs, "passes over the training data")->check(CLI::Range(1, 1000000));
  app.add_option("--batch-size", batch, "samples per step")->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  app.add_option("--lr", lr, "learning rate (peak when --warmup/--cosine)")->check(CLI::PositiveNumber);
  app.add_option("--optimizer", optimizer, "sgd or adamw")->check(CLI::IsMember({"sgd", "adamw"}));
  app.add_option("--loss", loss, "ce (softmax cross-entropy) or mse")->check(CLI::IsMember({"ce", "mse"}));
  app.add_option("--replace-head", replace_head, "replace the final linear layer with one of CLASSES outputs")->check(CLI::Range(1, 1 << 24));
  app.add_option("--freeze", freeze, "regex: parameters whose name matches stay frozen");
  app.add_option("--momentum", momentum, "SGD momentum")->check(CLI::Range(0.0, 0.999999));
  app.add_flag("--nesterov", nesterov, "SGD with Nesterov momentum");
  app.add_option("--weight-decay", wd, "SGD: L2; AdamW: decoupled")->check(CLI::NonNegativeNumber);
  app.add_option("--label-smoothing", smoothing, "ce label smoothing")->check(CLI::Range(0.0, 0.999999));
  app.add_option("--clip-norm", clip, "clip gradients to this global L2 norm (0: off)")->check(CLI::NonNegativeNumber);
  app.add_option("--warmup", warmup, "linear learning-rate warm-up steps")->check(CLI::NonNegativeNumber);
  app.add_flag("--cosine", cosine, "cosine learning-rate decay to 0 after warm-up");
  app.add_option("--seed", seed, "shuffling and head-initialization seed");
  app.add_option("--metrics", metrics_path, "JSON-lines metrics file (default OUT.metrics.jsonl)");
  app.add_option("--checkpoint", ckpt_path, "checkpoint file (default OUT with .ckpt.tsr)");
  app.add_option("--checkpoint-every", ckpt_every, "also checkpoint every N steps (0: only after each epoch)")->check(CLI::NonNegativeNumber);
  app.add_option("--max-steps", max_steps, "stop after this many steps in total");
  app.add_flag("--bn-eval", bn_eval, "keep BatchNormalization in inference mode (running statistics fixed)");
  app.add_flag("--quiet", quiet, "no progress bar");
  CLI11_PARSE(app, argc, argv);

  auto fail = [](const std::string& m) {
    std::cerr << "tessera-finetune: error: " << m << "\n";
    return 1;
  };
  if (model_path.empty() == resume_path.empty()) return fail("give exactly one of --model and --resume");
  if (metrics_path.empty()) metrics_path = out_path + ".metrics.jsonl";
  if (ckpt_path.empty())
    ckpt_path = (out_path.size() > 4 && out_path.substr(out_path.size() - 4) == ".tsr" ? out_path.substr(0, out_path.size() - 4) : out_path) + ".ckpt.tsr";
  const bool ce = loss == "ce";

  const std::string& in_path = resume_path.empty() ? model_path : resume_path;
  auto model = read_tsr_file(in_path);
  if (!model.is_ok()) return fail((resume_path.empty() ? "--model: " : "--resume: ") + model.status().message());
  auto train_data = load_data(train_path, "--train", ce);
  if (!train_data.is_ok()) return fail(train_data.status().message());
  auto val_data = load_data(val_path, "--val", ce);
  if (!val_data.is_ok()) return fail(val_data.status().message());

  train::TrainerConfig cfg;
  cfg.loss = loss;
  cfg.label_smoothing = smoothing;
  cfg.optimizer.kind = optimizer;
  cfg.optimizer.momentum = momentum;
  cfg.optimizer.nesterov = nesterov;
  cfg.optimizer.weight_decay = wd;
  cfg.freeze = freeze;
  cfg.replace_head = replace_head;
  cfg.seed = seed;
  cfg.clip_norm = clip;
  cfg.batchnorm_train = !bn_eval;
  auto trainer_r = train::Trainer::create(**model, cfg);
  if (!trainer_r.is_ok()) return fail(trainer_r.status().message());
  train::Trainer& t = **trainer_r;
  for (const std::string& n : t.notes()) std::cerr << "tessera-finetune: " << n << "\n";
  size_t nparams = 0;
  for (const auto& p : t.params()) nparams += static_cast<size_t>(p.value.numel());
  std::cerr << "tessera-finetune: " << t.params().size() << " parameter tensors (" << nparams << " values) trained, "
            << t.frozen().size() << " frozen; " << train_data->n << " training and " << val_data->n << " validation samples\n";

  for (const Data* d : {&*train_data, &*val_data}) {
    Shape xs = d->x.shape();
    xs[0] = std::min<int64_t>(batch, d->n);
    Status s = t.check_input(xs);
    if (!s.is_ok()) return fail((d == &*train_data ? "--train: " : "--val: ") + s.message());
  }
  const int64_t spe = (train_data->n + batch - 1) / batch;
  int64_t total = spe * epochs;
  if (max_steps >= 0) total = std::min(total, max_steps);
  std::ofstream metrics(metrics_path, t.step() > 0 ? std::ios::app : std::ios::trunc);
  if (!metrics) return fail("--metrics: cannot write '" + metrics_path + "'");
  const bool tty = !quiet && isatty(2);
  auto t0 = std::chrono::steady_clock::now();
  int64_t samples = 0;
  std::vector<int64_t> order;
  int64_t order_epoch = -1;
  auto checkpoint = [&]() -> bool {
    Status s = t.save(ckpt_path);
    if (!s.is_ok()) { fail("--checkpoint: " + s.message()); return false; }
    return true;
  };
  while (t.step() < total) {
    const int64_t step = t.step(), epoch = step / spe, b = step % spe;
    if (epoch != order_epoch) { order = epoch_order(train_data->n, seed, epoch); order_epoch = epoch; }
    const size_t b0 = static_cast<size_t>(b * batch), b1 = static_cast<size_t>(std::min(train_data->n, (b + 1) * batch));
    Tensor x = gather_rows(train_data->x, order, b0, b1), y = gather_rows(train_data->y, order, b0, b1);
    const double cur_lr = train::lr_at(lr, step, total, warmup, cosine);
    auto s0 = std::chrono::steady_clock::now();
    auto l = t.train_step(x, y, cur_lr);
    if (!l.is_ok()) return fail(l.status().message());
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    samples += static_cast<int64_t>(b1 - b0);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    metrics << "{\"step\":" << t.step() << ",\"epoch\":" << epoch << ",\"loss\":" << json_num(*l) << ",\"lr\":" << json_num(cur_lr)
            << ",\"batch\":" << (b1 - b0) << ",\"step_s\":" << json_num(dt) << ",\"samples_per_s\":" << json_num(samples / std::max(elapsed, 1e-9)) << "}\n";
    metrics.flush();
    if (!quiet) {
      const int width = 30, done = static_cast<int>(width * (b + 1) / spe);
      char line[256];
      std::snprintf(line, sizeof line, "epoch %lld/%d [%s%s] %lld/%lld loss %.4f %.0f samples/s", static_cast<long long>(epoch + 1), epochs,
                    std::string(done, '#').c_str(), std::string(width - done, '.').c_str(), static_cast<long long>(b + 1),
                    static_cast<long long>(spe), *l, samples / std::max(elapsed, 1e-9));
      if (tty) std::cerr << "\r" << line << std::flush;
      else if (b + 1 == spe) std::cerr << line << "\n";
    }
    if (ckpt_every > 0 && t.step() % ckpt_every == 0 && !checkpoint()) return 1;
    if (t.step() % spe == 0 || t.step() == total) {
      auto v = validate_all(t, *val_data, batch, ce);
      if (!v.is_ok()) return fail(v.status().message());
      metrics << "{\"epoch\":" << epoch << ",\"step\":" << t.step() << ",\"val_loss\":" << json_num(v->loss)
              << ",\"val_accuracy\":" << json_num(v->accuracy) << "}\n";
      metrics.flush();
      if (tty) std::cerr << "\n";
      if (!quiet) std::cerr << "  val loss " << v->loss << (ce ? ", val accuracy " + std::to_string(v->accuracy) : "") << "\n";
      if (!checkpoint()) return 1;
    }
  }
  auto v = validate_all(t, *val_data, batch, ce);
  if (!v.is_ok()) return fail(v.status().message());
  Status s = t.save(out_path);
  if (!s.is_ok()) return fail("--out: " + s.message());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("final: val_loss %.6f", v->loss);
  if (ce) std::printf(" val_accuracy %.4f", v->accuracy);
  std::printf(" (%lld samples) after %lld steps; %.1f s training; wrote %s\n", static_cast<long long>(val_data->n),
              static_cast<long long>(t.step()), secs, out_path.c_str());
  return 0;
}
