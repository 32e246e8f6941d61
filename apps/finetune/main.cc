// tessera-finetune: trains a .tsr model on .npz data (train/trainer.h), in one process or,
// with --parallel dp=N under `mpirun -np N`, data parallel over N ranks
// (train/data_parallel.h): --batch-size is the global batch, split across ranks by rank in
// contiguous slices; gradients are summed over ranks in buckets (--bucket-mb) by ring
// all-reduces; every rank applies the same optimizer step; rank 0 alone writes the
// checkpoints, the metrics and the output model. --zero 1|2|3 shards the optimizer state
// (train/data_parallel.h ZeroStage1), and the gradients, and the parameters
// (train/fsdp.h ShardedDataParallel); checkpoints then hold every rank's shard as weight
// chunks (train/sharded_checkpoint.h) and resume at any world size; --out is always a
// complete model.
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

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "apps/finetune/npz.h"
#include "apps/finetune/pipeline_run.h"
#include "tessera/tsr_file.h"
#include "train/comm/comm.h"
#include "train/data_parallel.h"
#include "train/fsdp.h"
#include "train/mesh.h"
#include "train/sharded_checkpoint.h"
#include "train/tensor_parallel.h"
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

// Validation over rows [v0, v1) of d: r.loss is the SUM of the per-row losses and
// r.accuracy the number of correct rows (the caller divides, after summing over ranks).
// src (ZeRO-3): the parameters are all-gathered per batch, a collective, so every rank runs
// `batches` evaluations: those past its rows evaluate row 0 and are discarded.
Result<ValResult> validate_rows(train::Trainer& t, const Data& d, int64_t bs, bool ce, int64_t v0, int64_t v1,
                                const train::Interpreter::ValueSource* src, int64_t batches) {
  std::vector<int64_t> idx(d.n);
  std::iota(idx.begin(), idx.end(), 0);
  ValResult r;
  int64_t correct = 0;
  for (int64_t b = v0; b < v1; b += bs) {
    const size_t e = static_cast<size_t>(std::min(v1, b + bs));
    Tensor x = gather_rows(d.x, idx, b, e), y = gather_rows(d.y, idx, b, e);
    TSR_ASSIGN_OR_RETURN(auto ev, t.evaluate(x, y, src));
    r.loss += ev.loss * static_cast<double>(e - b);
    if (ce) {
      const Tensor& o = ev.output;
      const int64_t c = o.numel() / o.dim(0);
      for (int64_t i = 0; i < o.dim(0); ++i) {
        const float* row = o.data_as<float>() + i * c;
        if (std::max_element(row, row + c) - row == y.data_as<int64_t>()[i]) ++correct;
      }
    }
    --batches;
  }
  for (; src && batches > 0; --batches) {
    TSR_RETURN_IF_ERROR(t.evaluate(gather_rows(d.x, idx, 0, 1), gather_rows(d.y, idx, 0, 1), src).status());
  }
  r.accuracy = static_cast<double>(correct);
  return r;
}

uint64_t hash_bytes(const void* p, size_t n) { return XXH3_64bits(p, n); }

Result<uint64_t> hash_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return invalid_argument("cannot read '" + path + "'");
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  std::vector<char> buf(1 << 20);
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    XXH3_64bits_update(st, buf.data(), static_cast<size_t>(f.gcount()));
  }
  const uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
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
  // A flag given twice takes its last value (as onnxruntime_perf_test and most CLIs do);
  // repeatable options (--input) keep every value. Subcommands inherit this.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string model_path, train_path, val_path, out_path, metrics_path, ckpt_path, resume_path, freeze, optimizer = "sgd", loss = "ce";
  int epochs = 10, replace_head = 0;
  int64_t batch = 32, max_steps = -1, ckpt_every = 0, warmup = 0;
  double lr = 0.01, momentum = 0, wd = 0, smoothing = 0, clip = 0;
  bool nesterov = false, cosine = false, quiet = false, bn_eval = false;
  uint64_t seed = 0;
  std::string parallel;
  double bucket_mb = 25, comm_timeout = 60;
  int zero = 0;
  int micro_batches = 0;
  std::string schedule = "1f1b";
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
  app.add_option("--parallel", parallel,
                 "dp=N: data parallel over N ranks; tp=N: tensor parallel (a model converted with --shard tp=N); "
                 "pp=P: pipeline parallel over P stages; dp=D,tp=T or dp=D,pp=P: a 2-D mesh (run under mpirun -np "
                 "with the product)");
  app.add_option("--bucket-mb", bucket_mb, "data parallel: gradient bucket size in MiB")->check(CLI::PositiveNumber);
  app.add_option("--zero", zero, "data parallel: ZeRO stage (0: none; 1: optimizer state sharded; 2: and gradients; 3: and parameters, FSDP)")
      ->check(CLI::Range(0, 3));
  app.add_option("--comm-timeout", comm_timeout, "data parallel: seconds a collective waits for its peers before failing")
      ->check(CLI::PositiveNumber);
  app.add_option("--micro-batches", micro_batches, "pipeline parallel (--parallel pp=P): micro-batches per step (default P)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--schedule", schedule, "pipeline parallel: gpipe or 1f1b")->check(CLI::IsMember({"gpipe", "1f1b"}));
  CLI11_PARSE(app, argc, argv);

  // ---- data parallel: the world communicator (gradients) and a second one for control
  // traffic (hashes, losses, validation sums), so the first one's CommStats count the
  // gradient bytes alone.
  int dp = 1, tp = 1, pp = 1;
  train::ParallelSpec pspec;
  if (!parallel.empty()) {
    auto spec = train::parse_parallel(parallel);
    if (!spec.is_ok()) {
      std::cerr << "tessera-finetune: error: " << spec.status().message() << "\n";
      return 2;
    }
    if (spec->tp > 1 && spec->pp > 1) {
      std::cerr << "tessera-finetune: error: --parallel '" << parallel
                << "': tensor and pipeline parallelism together are not implemented yet (give dp=D,tp=T or dp=D,pp=P)\n";
      return 2;
    }
    if (spec->tp > 1 && replace_head > 0) {
      std::cerr << "tessera-finetune: error: --replace-head with --parallel " << parallel
                << ": not with tensor parallelism (replace the head in one process, tessera export the result, convert it with --shard)\n";
      return 2;
    }
    if (spec->tp > 1 && zero > 0) {
      std::cerr << "tessera-finetune: error: --zero " << zero << " with --parallel " << parallel
                << ": ZeRO is not combined with tensor parallelism yet\n";
      return 2;
    }
    pspec = *spec;
    dp = spec->dp;
    tp = spec->tp;
    pp = spec->pp;
  }
  if (pp == 1 && (micro_batches > 0 || app.count("--schedule"))) {
    std::cerr << "tessera-finetune: error: --micro-batches and --schedule are for pipeline parallelism: give --parallel pp=P\n";
    return 2;
  }
  if (pp > 1 && zero > 0) {
    std::cerr << "tessera-finetune: error: --zero " << zero << " with --parallel " << parallel << ": ZeRO with pipeline stages is not implemented\n";
    return 2;
  }
  // Tensor parallel: the mesh's communicators; the data-parallel gradient traffic goes over
  // its dp communicator, the boxing collectives over its tp one.
  train::Mesh mesh;
  std::unique_ptr<train::Communicator> tp_ctrl;
  std::unique_ptr<train::TensorParallel> tpar;
  const int nranks = dp * tp * pp;
  std::unique_ptr<train::Communicator> world, ctrl;
  std::unique_ptr<train::GradientBuckets> buckets;
  std::unique_ptr<train::ZeroStage1> zero1;
  std::unique_ptr<train::ShardedDataParallel> zero23;  // --zero 2 and 3
  int rank = 0;
  std::string who;  // "[rank r] " in messages of a data-parallel run
  auto fail = [&](const std::string& m) {
    std::cerr << "tessera-finetune: error: " << who << m << "\n";
    return 1;
  };
  // A failure on one rank while the others may be waiting in a collective: end them all.
  auto fatal = [&](const std::string& m) {
    fail(m);
    if (world && world->size() > 1) train::mpi_abort(1);
    return 1;
  };
  if (zero >= 1 && parallel.empty()) {
    const char* what[] = {"", "the optimizer state", "the optimizer state and gradients", "the optimizer state, gradients and parameters"};
    std::cerr << "tessera-finetune: error: --zero " << zero << " shards " << what[zero] << " over data-parallel ranks: give --parallel dp=N\n";
    return 2;
  }
  if (dp > 1 || !parallel.empty()) {
    train::CommOptions co;
    co.timeout_s = comm_timeout;
    auto w = train::mpi_world(co);
    if (!w.is_ok()) return fail("--parallel " + parallel + ": " + w.status().message());
    world = std::move(*w);
    rank = world->rank();
    who = "[rank " + std::to_string(rank) + "] ";
    if (world->size() != nranks)
      return fail("--parallel " + (tp > 1 || pp > 1 ? parallel : "dp=" + std::to_string(dp)) + " but the job has " +
                  std::to_string(world->size()) + " ranks (launch with mpirun -np " + std::to_string(nranks) + ")");
    auto c = world->split(0, rank);
    if (!c.is_ok()) return fatal("communicator split: " + c.status().message());
    ctrl = std::move(*c);
    if (tp > 1) {
      auto m = train::make_mesh(*world, pspec);
      if (!m.is_ok()) return fatal(m.status().message());
      mesh = std::move(*m);
      auto tc = mesh.tp->split(0, mesh.tp_index);
      if (!tc.is_ok()) return fatal("communicator split: " + tc.status().message());
      tp_ctrl = std::move(*tc);
    }
  }
  // The gradient all-reduce runs over the data-parallel ranks; its rank picks the batch slice.
  train::Communicator* gcomm = tp > 1 ? mesh.dp.get() : world.get();
  const int dp_rank = tp > 1 ? mesh.dp_index : rank;
  // Communicator errors name ranks of the mesh dim's communicator: their world ranks.
  std::string tp_groups;
  if (tp > 1) {
    std::string d, t;
    for (int i = 0; i < dp; ++i) d += (i ? "," : "") + std::to_string(i * tp + mesh.tp_index);
    for (int i = 0; i < tp; ++i) t += (i ? "," : "") + std::to_string(mesh.dp_index * tp + i);
    tp_groups = " (tensor-parallel ranks 0.." + std::to_string(tp - 1) + " are world ranks " + t + "; data-parallel ranks 0.." +
                std::to_string(dp - 1) + " are world ranks " + d + ")";
  }
  const bool root = rank == 0;
  struct Finalize {  // communicators first, then MPI
    std::unique_ptr<train::Communicator>*w, *c;
    std::unique_ptr<train::GradientBuckets>* b;
    std::unique_ptr<train::ZeroStage1>* z;
    std::unique_ptr<train::ShardedDataParallel>* z23;
    std::unique_ptr<train::TensorParallel>* tpar;
    std::unique_ptr<train::Communicator>* tc;
    train::Mesh* mesh;
    ~Finalize() {
      if (!*w) return;
      b->reset();
      z->reset();
      z23->reset();
      tpar->reset();
      tc->reset();
      mesh->dp.reset();
      mesh->tp.reset();
      mesh->pp.reset();
      c->reset();
      w->reset();
      train::mpi_finalize();
    }
  } finalize{&world, &ctrl, &buckets, &zero1, &zero23, &tpar, &tp_ctrl, &mesh};
  if (!root) quiet = true;
  if (model_path.empty() == resume_path.empty()) return fail("give exactly one of --model and --resume");
  if (metrics_path.empty()) metrics_path = out_path + ".metrics.jsonl";
  if (ckpt_path.empty())
    ckpt_path = (out_path.size() > 4 && out_path.substr(out_path.size() - 4) == ".tsr" ? out_path.substr(0, out_path.size() - 4) : out_path) + ".ckpt.tsr";
  const bool ce = loss == "ce";

  const std::string& in_path = resume_path.empty() ? model_path : resume_path;
  auto model = read_tsr_file(in_path);
  if (!model.is_ok()) return fail((resume_path.empty() ? "--model: " : "--resume: ") + model.status().message());
  // A sharded checkpoint (ZeRO, any world size): every rank assembles the parameters and
  // optimizer state from its chunks (train/sharded_checkpoint.h).
  const uint64_t chunk_hash = train::sharding_hash(**model);
  if (!(*model)->chunks.empty()) {
    Status s = train::assemble_sharded_checkpoint(**model);
    if (!s.is_ok()) return fatal((resume_path.empty() ? "--model '" : "--resume '") + in_path + "': " + s.message());
  }
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
  // Every rank must have loaded the same model, data and flags: their hashes, all-gathered.
  if (world && world->size() > 1) {
    const int nranks = world->size();
    auto mh = hash_file(in_path);
    if (!mh.is_ok()) return fatal(mh.status().message());
    std::string flags;
    for (int i = 1; i < argc; ++i) flags += std::string(argv[i]) + '\0';
    constexpr int kH = 5;
    uint64_t mine[kH] = {*mh, hash_bytes(flags.data(), flags.size()),
                         hash_bytes(train_data->x.data(), train_data->x.nbytes()) ^ (hash_bytes(train_data->y.data(), train_data->y.nbytes()) * 3),
                         hash_bytes(val_data->x.data(), val_data->x.nbytes()) ^ (hash_bytes(val_data->y.data(), val_data->y.nbytes()) * 3),
                         chunk_hash};
    std::vector<uint64_t> all(kH * static_cast<size_t>(nranks));
    Status s = ctrl->all_gather(mine, all.data(), kH, DType::kInt64);
    if (!s.is_ok()) return fatal("checking that all ranks loaded the same model: " + s.message());
    const char* what[kH] = {resume_path.empty() ? "the model (--model)" : "the checkpoint (--resume)", "the command-line flags",
                            "the training data (--train)", "the validation data (--val)",
                            "the sharding of the checkpoint (its meshes, TensorShardings and weight chunks)"};
    std::string diff;
    for (int r = 1; r < nranks; ++r)
      for (int k = 0; k < kH; ++k)
        if (all[kH * r + k] != all[k]) diff += std::string(diff.empty() ? "" : "; ") + "rank " + std::to_string(r) + " differs in " + what[k];
    if (!diff.empty())  // every rank sees the same table: all stop cleanly
      return fail("data parallel ranks disagree with rank 0: " + diff + " (every rank must load the same files with the same flags)");
  }
  if (pp > 1) {  // pipeline parallel: apps/finetune/pipeline_run.cc
    finetune::PipelineRunOptions po;
    po.spec = train::parse_parallel(parallel).value();
    po.micro_batches = micro_batches > 0 ? micro_batches : pp;
    po.schedule = schedule;
    po.epochs = epochs;
    po.batch = batch;
    po.max_steps = max_steps;
    po.ckpt_every = ckpt_every;
    po.warmup = warmup;
    po.lr = lr;
    po.cosine = cosine;
    po.quiet = quiet;
    po.ce = ce;
    po.seed = seed;
    po.out_path = out_path;
    po.metrics_path = metrics_path;
    po.ckpt_path = ckpt_path;
    po.cfg = cfg;
    po.cfg.batchnorm_train = !bn_eval;
    po.gather_rows = gather_rows;
    po.epoch_order = epoch_order;
    return finetune::run_pipeline(po, **model, train_data->x, train_data->y, val_data->x, val_data->y, *world, *ctrl);
  }
  // Tensor parallel: this rank's local model (its weight slices, boxing nodes); the trainer
  // clips nothing itself (the norm is over all ranks' slices, TensorParallel).
  const Model* train_model = model->get();
  if (tp > 1) {
    auto tpr = train::TensorParallel::create(**model, *mesh.tp, *tp_ctrl);
    if (!tpr.is_ok()) return fail(tpr.status().message());  // every rank reads the same file: all stop
    tpar = std::move(*tpr);
    train_model = &tpar->local_model();
    cfg.clip_norm = 0;
    if (root) {
      std::cerr << "tessera-finetune: tensor parallel over " << tp << " ranks x data parallel over " << dp << ": "
                << tpar->report().size() << " boxing node(s)\n";
      for (const std::string& l : tpar->report()) std::cerr << "  " << l << "\n";
    }
  }
  auto trainer_r = train::Trainer::create(*train_model, cfg);
  if (!trainer_r.is_ok()) return fail(trainer_r.status().message());
  train::Trainer& t = **trainer_r;
  if (nranks > 1 && t.batchnorm_training())
    return fail("--parallel dp=" + std::to_string(dp) +
                ": the model has BatchNormalization in training mode, whose batch statistics would be per rank (no "
                "synchronized BatchNormalization yet); give --bn-eval");
  if (root) for (const std::string& n : t.notes()) std::cerr << "tessera-finetune: " << n << "\n";
  size_t nparams = 0;
  for (const auto& p : t.params()) nparams += static_cast<size_t>(p.value.numel());
  if (root)
    std::cerr << "tessera-finetune: " << t.params().size() << " parameter tensors (" << nparams << " values) trained, "
              << t.frozen().size() << " frozen; " << train_data->n << " training and " << val_data->n << " validation samples\n";
  if (world) {
    std::vector<Shape> shapes;
    for (const auto& p : t.params()) shapes.push_back(p.value.shape());
    auto b = train::GradientBuckets::create(*gcomm, shapes, static_cast<int64_t>(bucket_mb * 1024 * 1024));
    if (!b.is_ok()) return fail("--bucket-mb: " + b.status().message());
    buckets = std::move(*b);
    if (zero == 1) {
      auto z = train::ZeroStage1::create(*world, *ctrl, t.params(), cfg.optimizer);
      if (!z.is_ok()) return fail("--zero 1: " + z.status().message());
      zero1 = std::move(*z);
      if (root)
        std::cerr << "tessera-finetune: ZeRO stage 1: optimizer state sharded, " << zero1->shard_elements()
                  << " parameter elements per rank\n";
    }
    if (zero >= 2) {
      auto z = train::ShardedDataParallel::create(*world, *ctrl, t.mutable_params(), cfg.optimizer, zero,
                                                  static_cast<int64_t>(bucket_mb * 1024 * 1024));
      if (!z.is_ok()) return fail("--zero " + std::to_string(zero) + ": " + z.status().message());
      zero23 = std::move(*z);
      if (root)
        std::cerr << "tessera-finetune: ZeRO stage " << zero << ": " << (zero == 3 ? "parameters, " : "")
                  << "gradients and optimizer state sharded along dim 0 over " << dp << " ranks, " << zero23->buckets()
                  << " gradient bucket(s)\n";
    }
    if (root && !zero1 && !zero23 && !tpar)
      std::cerr << "tessera-finetune: data parallel over " << dp << " ranks: global batch " << batch << ", " << buckets->buckets()
                << " gradient bucket(s) of at most " << bucket_mb << " MiB, " << buckets->gradient_bytes() << " gradient bytes\n";
  }

  for (const Data* d : {&*train_data, &*val_data}) {
    Shape xs = d->x.shape();
    xs[0] = std::min<int64_t>(batch, d->n);
    // Tensor parallel: the runtime's planner checks the global model (the local one has
    // tessera.train collective nodes it does not know).
    Status s = tpar ? train::check_model_input(**model, xs) : t.check_input(xs);
    if (!s.is_ok()) return fail((d == &*train_data ? "--train: " : "--val: ") + s.message());
  }
  if (zero == 3) {  // from here on a rank holds only its rows of each parameter
    t.drop_parameter_initializers();
    model->reset();
  }
  const int64_t spe = (train_data->n + batch - 1) / batch;
  int64_t total = spe * epochs;
  if (max_steps >= 0) total = std::min(total, max_steps);
  std::ofstream metrics;
  if (root) {
    metrics.open(metrics_path, t.step() > 0 ? std::ios::app : std::ios::trunc);
    if (!metrics) return fatal("--metrics: cannot write '" + metrics_path + "'");
  }
  const bool tty = !quiet && isatty(2);
  auto t0 = std::chrono::steady_clock::now();
  int64_t samples = 0;
  std::vector<int64_t> order;
  int64_t order_epoch = -1;
  // ZeRO: every rank gathers the sharded optimizer state (and, stage 3, the parameters)
  // before rank 0 writes it.
  auto gather_state = [&](int to) -> bool {  // to: the rank that needs them (ZeRO-2/3), -1: every rank
    if (!zero1 && !zero23) return true;
    Status s = zero1 ? zero1->gather_state(t.mutable_params()) : zero23->gather(t.mutable_params(), true, to);
    if (!s.is_ok()) { fatal("gathering the ZeRO optimizer state: " + s.message()); return false; }
    return true;
  };
  // Writes the model (rank 0); tensor parallel: the full model gathered from every tensor
  // rank's slices first (collective).
  auto save_model = [&](const std::string& path) -> Status {
    if (!tpar) return root ? t.save(path) : Status::ok();
    TSR_ASSIGN_OR_RETURN(auto full, tpar->gather(*t.snapshot()));
    return root ? write_tsr_file(*full, path) : Status::ok();
  };
  // Under ZeRO the checkpoint holds every rank's shard as weight chunks (one file, written
  // by rank 0 atomically), so that it resumes at any world size.
  auto checkpoint = [&]() -> bool {
    if (!gather_state(0)) return false;
    Status s = Status::ok();
    if (!zero1 && !zero23) {
      s = save_model(ckpt_path);
    } else if (root) {
      std::shared_ptr<Model> m = t.snapshot();
      std::vector<std::string> names;
      std::vector<Shape> shapes;
      for (const auto& p : t.params()) { names.push_back(p.name); shapes.push_back(p.value.shape()); }
      s = train::shard_checkpoint(*m, names, zero23 ? zero23->layout() : train::flat_layout(shapes, dp), zero);
      if (s.is_ok()) s = write_tsr_file(*m, ckpt_path);
    }
    if (zero23) zero23->release_values(t.mutable_params());
    if (!s.is_ok()) { fatal("--checkpoint: " + s.message()); return false; }
    return true;
  };
  // Validation: each rank evaluates its contiguous slice of the validation rows; the sums
  // of losses and of correct rows are summed over ranks.
  auto validate = [&]() -> Result<ValResult> {
    auto [v0, v1] = train::split_rows(val_data->n, dp, dp_rank);
    TSR_ASSIGN_OR_RETURN(ValResult v, validate_rows(t, *val_data, batch, ce, v0, v1, zero23 ? zero23->source() : nullptr,
                                                     (train::split_rows(val_data->n, dp, 0).second + batch - 1) / batch));
    // The tensor ranks of a dp rank computed the same sums: one of them counts. Zeros, not
    // ValResult{}, whose accuracy -1 would take one correct row off per extra tensor rank.
    if (tpar && mesh.tp_index != 0) v = ValResult{0, 0};
    if (ctrl && nranks > 1) {
      double sums[2] = {v.loss, v.accuracy};
      TSR_RETURN_IF_ERROR(ctrl->all_reduce(sums, sums, 2, DType::kFloat64, train::ReduceOp::kSum));
      v.loss = sums[0];
      v.accuracy = sums[1];
    }
    v.loss /= static_cast<double>(val_data->n);
    v.accuracy = ce ? v.accuracy / static_cast<double>(val_data->n) : -1;
    return v;
  };
  uint64_t comm_sent_total = 0, tp_sent_total = 0, tp_payload_total = 0;
  int64_t dp_steps = 0;
  std::string peak_json;
  // ZeRO-3: how often a step all-gathers parameter i (once per pass that reads it).
  std::vector<int> acquisitions;
  std::string acq_json;
  for (size_t i = 0; zero == 3 && i < t.params().size(); ++i) {
    acquisitions.push_back(t.segments_reading_param(i));
    acq_json += std::string(i ? "," : "{") + "\"" + t.params()[i].name + "\":" + std::to_string(acquisitions.back());
  }
  if (zero == 3) acq_json += "}";
  while (t.step() < total) {
    const int64_t step = t.step(), epoch = step / spe, b = step % spe;
    if (epoch != order_epoch) { order = epoch_order(train_data->n, seed, epoch); order_epoch = epoch; }
    const size_t b0 = static_cast<size_t>(b * batch), b1 = static_cast<size_t>(std::min(train_data->n, (b + 1) * batch));
    const double cur_lr = train::lr_at(lr, step, total, warmup, cosine);
    auto s0 = std::chrono::steady_clock::now();
    Result<double> l = 0.0;
    std::string comm_json;
    if (!world) {
      Tensor x = gather_rows(train_data->x, order, b0, b1), y = gather_rows(train_data->y, order, b0, b1);
      l = t.train_step(x, y, cur_lr);
      if (!l.is_ok()) return fail(l.status().message());
    } else {
      // This rank's contiguous slice [b0 + r0, b0 + r1) of the global batch [b0, b1).
      const int64_t rows = static_cast<int64_t>(b1 - b0);
      auto [r0, r1] = train::split_rows(rows, dp, dp_rank);
      std::vector<Tensor> grads;
      double local_loss = 0;
      // The loss is a mean over rows: weight this rank's mean by its share of the rows.
      const double weight = static_cast<double>(r1 - r0) / static_cast<double>(rows);
      const uint64_t before = gcomm->stats().total(), tp_before = tpar ? mesh.tp->stats().total() : 0,
                     tp_payload = tpar ? tpar->all_reduce_payload_bytes() : 0;
      // Data parallel without ZeRO: each bucket's all-reduce starts as soon as the backward
      // pass has made its gradients.
      if (!zero1 && !zero23) buckets->begin(weight);
      if (zero23) zero23->begin(weight);
      train::Trainer::GradCallback on_grad = [&](size_t i, const Tensor& g) { zero23 ? zero23->add(i, g) : buckets->add(i, g); };
      if (zero23) {
        // ZeRO-2/3: gradients are packed and reduce-scattered as the backward pass makes
        // them. A rank without rows runs row 0 with weight 0 (ZeRO-3's parameter
        // all-gathers are collectives every rank must join).
        const bool none = r1 <= r0;
        const size_t a = none ? b0 : b0 + r0, z = none ? b0 + 1 : b0 + r1;
        Tensor x = gather_rows(train_data->x, order, a, z), y = gather_rows(train_data->y, order, a, z);
        auto ll = t.compute_gradients_sharded(x, y, static_cast<uint64_t>(dp_rank), on_grad, zero == 3 ? zero23->source() : nullptr);
        if (!ll.is_ok()) return fatal(ll.status().message());
        local_loss = none ? 0.0 : *ll;
      } else if (r1 > r0) {
        Tensor x = gather_rows(train_data->x, order, b0 + r0, b0 + r1), y = gather_rows(train_data->y, order, b0 + r0, b0 + r1);
        auto ll = t.compute_gradients(x, y, &grads, static_cast<uint64_t>(dp_rank), zero1 ? nullptr : &on_grad);
        if (!ll.is_ok()) return fatal(ll.status().message() + tp_groups);
        local_loss = *ll;
      } else {  // fewer rows than ranks: this rank contributes zeros
        for (const auto& p : t.params()) grads.push_back(Tensor::allocate(DType::kFloat32, p.value.shape()).value());
      }
      Status s = zero1    ? t.apply_external_step([&](std::vector<train::Param>& ps, int64_t st) {
                           return zero1->step(grads, weight, ps, cur_lr, st, clip);
                         })
                 : zero23 ? zero23->finish(false)
                          : buckets->finish(grads);
      if (s.is_ok() && zero23)
        s = t.apply_external_step([&](std::vector<train::Param>& ps, int64_t st) { return zero23->step(ps, cur_lr, st, clip); });
      if (!s.is_ok())
        return fatal((zero1 || zero23 ? "ZeRO step " : "gradient all-reduce at step ") + std::to_string(step) + ": " + s.message() + tp_groups);
      const uint64_t sent = gcomm->stats().total() - before, tp_sent = tpar ? mesh.tp->stats().total() - tp_before : 0;
      const uint64_t ring = zero1 ? zero1->ring_bytes_exact() : zero23 ? zero23->ring_bytes_exact(acquisitions) : buckets->ring_bytes_exact();
      comm_sent_total += sent;
      ++dp_steps;
      // Control traffic (own communicator): the global loss and every rank's byte counts.
      double gl = tpar && mesh.tp_index != 0 ? 0.0 : local_loss * weight;  // once per dp rank
      s = ctrl->all_reduce(&gl, &gl, 1, DType::kFloat64, train::ReduceOp::kSum);
      tp_sent_total += tp_sent;
      if (tpar) tp_payload_total += tpar->all_reduce_payload_bytes() - tp_payload;
      int64_t mine[5] = {static_cast<int64_t>(sent), static_cast<int64_t>(ring), static_cast<int64_t>(tp_sent),
                         zero23 ? static_cast<int64_t>(zero23->peak_gathered_bytes()) : 0,
                         zero23 ? static_cast<int64_t>(zero23->peak_gradient_buffer_bytes()) : 0};
      std::vector<int64_t> all(5 * static_cast<size_t>(nranks));
      if (s.is_ok()) s = ctrl->all_gather(mine, all.data(), 5, DType::kInt64);
      if (!s.is_ok()) return fatal("step " + std::to_string(step) + ": " + s.message());
      if (tpar && clip > 0) {
        auto norm = tpar->clip_grad_global_norm(grads, t.params(), clip);
        if (!norm.is_ok()) return fatal("gradient norm at step " + std::to_string(step) + ": " + norm.status().message());
      }
      if (!zero1 && !zero23) {
        s = t.apply_gradients(grads, cur_lr);
        if (!s.is_ok()) return fatal(s.message());
      }
      l = gl;
      std::string m = "[", e = "[", tpm = "[", pk = "[", gb = "[";
      for (int r = 0; r < nranks; ++r) {
        m += (r ? "," : "") + std::to_string(all[5 * r]);
        e += (r ? "," : "") + std::to_string(all[5 * r + 1]);
        tpm += (r ? "," : "") + std::to_string(all[5 * r + 2]);
        pk += (r ? "," : "") + std::to_string(all[5 * r + 3]);
        gb += (r ? "," : "") + std::to_string(all[5 * r + 4]);
      }
      if (tpar)  // the boxing collectives of this step over each rank's tp communicator, and rank 0's ring theory
        comm_json = ",\"tp\":" + std::to_string(tp) + ",\"dp\":" + std::to_string(dp) + ",\"tp_comm_bytes_per_rank\":" + tpm +
                    "],\"tp_comm_bytes_theory\":" +
                    json_num(2.0 * (tp - 1) / tp * static_cast<double>(tpar->all_reduce_payload_bytes() - tp_payload));
      if (zero23) {
        peak_json = pk + "]";
        comm_json += ",\"parameter_bytes\":" + std::to_string(zero23->parameter_bytes()) + ",\"gathered_peak_bytes_per_rank\":" + peak_json +
                     ",\"gradient_buffer_peak_bytes_per_rank\":" + gb + "]";
        if (zero == 3) comm_json += ",\"gathers_per_param\":" + acq_json;  // all-gathers per step: passes reading it
      }
      comm_json += ",\"world_size\":" + std::to_string(nranks) + ",\"comm_bytes\":" + std::to_string(sent) + ",\"comm_bytes_per_rank\":" + m +
                  "],\"comm_bytes_ring_per_rank\":" + e + "],\"comm_bytes_theory\":" + json_num(buckets->ring_bytes_formula()) +
                  ",\"gradient_bytes\":" + std::to_string(buckets->gradient_bytes()) + ",\"buckets\":" + std::to_string(zero1 ? 1 : zero23 ? zero23->buckets() : buckets->buckets()) +
                  ",\"buckets_started_in_backward\":" + std::to_string(zero1 ? 0 : zero23 ? zero23->started_early() : buckets->started_early()) +
                  ",\"zero\":" + std::to_string(zero);
    }
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    samples += static_cast<int64_t>(b1 - b0);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (root) {
      metrics << "{\"step\":" << t.step() << ",\"epoch\":" << epoch << ",\"loss\":" << json_num(*l) << ",\"lr\":" << json_num(cur_lr)
              << ",\"batch\":" << (b1 - b0) << ",\"step_s\":" << json_num(dt) << ",\"samples_per_s\":" << json_num(samples / std::max(elapsed, 1e-9))
              << comm_json << "}\n";
      metrics.flush();
    }
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
      auto v = validate();
      if (!v.is_ok()) return fatal(v.status().message());
      if (root) {
        metrics << "{\"epoch\":" << epoch << ",\"step\":" << t.step() << ",\"val_loss\":" << json_num(v->loss)
                << ",\"val_accuracy\":" << json_num(v->accuracy) << "}\n";
        metrics.flush();
      }
      if (tty) std::cerr << "\n";
      if (!quiet) std::cerr << "  val loss " << v->loss << (ce ? ", val accuracy " + std::to_string(v->accuracy) : "") << "\n";
      if (!checkpoint()) return 1;
    }
  }
  auto v = validate();
  if (!v.is_ok()) return fatal(v.status().message());
  if (!gather_state(-1)) return 1;  // ZeRO: full optimizer state (and, stage 3, parameters) on every rank
  if (world && nranks > 1) {
    // Every rank's weights must be the same as those of the rank holding the same slices
    // (rank r % tp), and the replicated ones the same everywhere: hashes, all-gathered.
    uint64_t h[2] = {0, tpar ? tpar->replicated_hash(t.params()) : 0};
    for (const auto& p : t.params()) h[0] = h[0] * 1000003ULL ^ hash_bytes(p.value.data(), p.value.nbytes());
    std::vector<uint64_t> all(2 * static_cast<size_t>(nranks));
    Status s = ctrl->all_gather(h, all.data(), 2, DType::kInt64);
    if (!s.is_ok()) return fatal("final weight check: " + s.message());
    for (int r = 1; r < nranks; ++r) {
      if (all[2 * r] != all[2 * (r % tp)])
        return fatal("rank " + std::to_string(r) + " ended with other weights than rank " + std::to_string(r % tp) + " (a bug: please report)");
      if (all[2 * r + 1] != all[1])
        return fatal("rank " + std::to_string(r) + " ended with other replicated weights than rank 0 (a bug: please report)");
    }
  }
  if (world && dp_steps > 0 && root && zero23) {
    const int n = dp;
    const double formula = (zero == 2 ? 2.0 : 3.0) * (n - 1) / n * static_cast<double>(zero23->parameter_bytes());
    std::printf("ZeRO stage %d: %d ranks, %lld steps; parameter bytes %llu; rank 0 sent %llu bytes per step (ring exact %llu, "
                "formula %s = %.1f)%s%s\n",
                zero, n, static_cast<long long>(dp_steps), static_cast<unsigned long long>(zero23->parameter_bytes()),
                static_cast<unsigned long long>(comm_sent_total / dp_steps),
                static_cast<unsigned long long>(zero23->ring_bytes_exact(acquisitions)),
                zero == 2 ? "2(N-1)/N * gradient bytes" : "3(N-1)/N * parameter bytes, the bound when the backward pass reads every parameter",
                formula, zero == 3 ? "; peak gathered parameter bytes per rank " : "", zero == 3 ? peak_json.c_str() : "");
    if (zero == 3)
      std::printf("ZeRO stage 3: rank 0's parameter all-gathers: %llu prefetched (overlapping computation), %llu blocking\n",
                  static_cast<unsigned long long>(zero23->prefetched_gathers()), static_cast<unsigned long long>(zero23->blocking_gathers()));
  } else if (world && dp_steps > 0 && root && !(tpar && dp == 1))
    std::printf("data parallel%s: %d ranks, %lld steps; gradient bytes %llu per step; rank 0 sent %llu bytes per step "
                "(ring exact %llu, theory 2(N-1)/N * gradient bytes = %.1f)\n",
                zero1 ? " (ZeRO stage 1)" : "", dp, static_cast<long long>(dp_steps), static_cast<unsigned long long>(buckets->gradient_bytes()),
                static_cast<unsigned long long>(comm_sent_total / dp_steps), static_cast<unsigned long long>(zero1 ? zero1->ring_bytes_exact() : buckets->ring_bytes_exact()),
                buckets->ring_bytes_formula());
  if (tpar && dp_steps > 0 && root)
    std::printf("tensor parallel: tp=%d dp=%d, %lld steps; the tp communicator of rank 0 sent %llu bytes per step (boxing "
                "collectives; theory 2(T-1)/T * all-reduced activation bytes = %.1f)\n",
                tp, dp, static_cast<long long>(dp_steps), static_cast<unsigned long long>(tp_sent_total / dp_steps),
                2.0 * (tp - 1) / tp * static_cast<double>(tp_payload_total) / static_cast<double>(dp_steps));
  if (tpar) {  // every tensor rank takes part in gathering the model
    Status s = save_model(out_path);
    if (!s.is_ok()) return fatal("--out: " + s.message());
  }
  if (!root) {
    if (ctrl) {
      Status s = ctrl->barrier();  // rank 0 writes the output
      if (!s.is_ok()) return fail(s.message());
    }
    return 0;
  }
  if (!tpar) {
    Status s = t.save(out_path);
    if (!s.is_ok()) return fatal("--out: " + s.message());
  }
  if (ctrl && nranks > 1) {
    Status b = ctrl->barrier();
    if (!b.is_ok()) return fail(b.message());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("final: val_loss %.6f", v->loss);
  if (ce) std::printf(" val_accuracy %.4f", v->accuracy);
  std::printf(" (%lld samples) after %lld steps; %.1f s training; wrote %s\n", static_cast<long long>(val_data->n),
              static_cast<long long>(t.step()), secs, out_path.c_str());
  return 0;
}
