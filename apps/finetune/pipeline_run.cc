#include "apps/finetune/pipeline_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "converter/pipeline_stages.h"
#include "tessera/tsr_file.h"
#include "train/data_parallel.h"
#include "train/pipeline.h"

namespace tessera::finetune {

namespace {

std::string num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

std::string list(const std::vector<int64_t>& v, size_t k, size_t stride) {
  std::string s = "[";
  for (size_t i = k; i < v.size(); i += stride) s += (i == k ? "" : ",") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

int run_pipeline(const PipelineRunOptions& o, const Model& model, const Tensor& tx, const Tensor& ty, const Tensor& vx,
                 const Tensor& vy, train::Communicator& world, train::Communicator& ctrl) {
  const int rank = world.rank();
  const std::string who = "[rank " + std::to_string(rank) + "] ";
  auto fail = [&](const std::string& m) {
    std::cerr << "tessera-finetune: error: " << who << m << "\n";
    return 1;
  };
  auto fatal = [&](const std::string& m) {
    fail(m);
    if (world.size() > 1) train::mpi_abort(1);
    return 1;
  };
  const int P = o.spec.pp, D = o.spec.dp;
  auto sched = train::parse_schedule(o.schedule);
  if (!sched.is_ok()) return fail(sched.status().message());
  if (o.spec.tp > 1) return fail("--parallel " + o.spec.describe() + ": tensor parallelism with pipeline stages is not implemented");
  // The cut: the file's stages, else cut here the way `tessera convert --pipeline-stages` does.
  const std::string sink = train::pipeline_loss_input(model.graph, o.cfg.loss);
  auto cut = pipeline_cut_from_graph(model.graph, 0, {sink});
  if (!cut.is_ok()) return fail("--parallel pp=" + std::to_string(P) + ": " + cut.status().message());
  const bool from_file = cut->stages == P;
  if (cut->stages > 0 && !from_file && rank == 0)  // e.g. a checkpoint of another layout
    std::cerr << "tessera-finetune: the file is cut into " << cut->stages << " pipeline stages; cutting it into " << P << " at load\n";
  if (!from_file) {
    cut = cut_pipeline(model.graph, P, {sink});
    if (!cut.is_ok()) return fail("--parallel pp=" + std::to_string(P) + ": " + cut.status().message());
  }
  const bool root = rank == 0;
  if (root)
    std::cerr << "tessera-finetune: pipeline of " << P << " stages (" << (from_file ? "from the file" : "cut at load") << ") x "
              << D << " data-parallel, " << o.micro_batches << " micro-batches, schedule " << o.schedule << ":\n"
              << cut->describe(model.graph);
  auto mesh = train::make_mesh(world, o.spec);
  if (!mesh.is_ok()) return fail(mesh.status().message());
  auto meta = mesh->pp->split(0, mesh->pp_index);
  if (!meta.is_ok()) return fatal("communicator split: " + meta.status().message());
  auto pctrl = mesh->pp->split(0, mesh->pp_index);
  if (!pctrl.is_ok()) return fatal("communicator split: " + pctrl.status().message());
  auto stage_r = train::PipelineStage::create(model, *cut, mesh->pp_index, o.cfg);
  // A stage that cannot be built fails on its ranks only: all ranks agree before training.
  int64_t built = stage_r.is_ok() ? 1 : 0;
  Status agreed = ctrl.all_reduce(&built, &built, 1, DType::kInt64, train::ReduceOp::kMin);
  if (!agreed.is_ok()) return fatal("building the pipeline stages: " + agreed.message());
  if (!stage_r.is_ok()) return fail("stage " + std::to_string(mesh->pp_index) + ": " + stage_r.status().message());
  if (built == 0) return fail("stage " + std::to_string(mesh->pp_index) + ": another stage could not be built (see its error)");
  train::PipelineStage& st = **stage_r;
  const bool last = mesh->pp_index + 1 == P;
  const int64_t n = tx.dim(0), spe = (n + o.batch - 1) / o.batch;
  int64_t total = spe * o.epochs;
  if (o.max_steps >= 0) total = std::min(total, o.max_steps);
  std::ofstream metrics;
  if (root) {
    metrics.open(o.metrics_path, st.step() > 0 ? std::ios::app : std::ios::trunc);
    if (!metrics) return fatal("--metrics: cannot write '" + o.metrics_path + "'");
  }
  // Every stage's weights and optimizer state to rank 0, which writes one whole model.
  auto gather_write = [&](const std::string& path) -> Status {
    std::vector<uint8_t> mine = st.weights_blob();
    if (!root) {
      if (mesh->dp_index != 0) return Status::ok();
      int64_t size = static_cast<int64_t>(mine.size());
      TSR_RETURN_IF_ERROR(ctrl.send(&size, 1, DType::kInt64, 0));
      return ctrl.send(mine.data(), size, DType::kUInt8, 0);
    }
    Model m = model;
    TSR_RETURN_IF_ERROR(train::PipelineStage::merge_blob(m, mine));
    for (int s = 1; s < P; ++s) {
      int64_t size = 0;
      TSR_RETURN_IF_ERROR(ctrl.recv(&size, 1, DType::kInt64, s * D));
      std::vector<uint8_t> b(static_cast<size_t>(size));
      TSR_RETURN_IF_ERROR(ctrl.recv(b.data(), size, DType::kUInt8, s * D));
      TSR_RETURN_IF_ERROR(train::PipelineStage::merge_blob(m, b));
    }
    auto ts = std::make_shared<TrainingState>(*m.training);
    ts->optimizer = o.cfg.optimizer.kind;
    ts->step = st.step();
    m.training = ts;
    apply_pipeline_cut(m.graph, *cut);
    return write_tsr_file(m, path);
  };
  auto validate = [&]() -> Result<std::pair<double, double>> {
    const int64_t vn = vx.dim(0);
    auto [v0, v1] = train::split_rows(vn, D, mesh->dp_index);
    std::vector<int64_t> idx(static_cast<size_t>(vn));
    for (int64_t i = 0; i < vn; ++i) idx[static_cast<size_t>(i)] = i;
    double sums[2] = {0, 0};
    for (int64_t b = v0; b < v1; b += o.batch) {
      const size_t e = static_cast<size_t>(std::min(v1, b + o.batch));
      TSR_ASSIGN_OR_RETURN(auto r, st.evaluate(o.gather_rows(vx, idx, static_cast<size_t>(b), e), o.gather_rows(vy, idx, static_cast<size_t>(b), e),
                                               *mesh->pp, **meta));
      sums[0] += r.first;
      sums[1] += static_cast<double>(r.second);
    }
    TSR_RETURN_IF_ERROR(ctrl.all_reduce(sums, sums, 2, DType::kFloat64, train::ReduceOp::kSum));
    return std::pair<double, double>{sums[0] / static_cast<double>(vn), o.ce ? sums[1] / static_cast<double>(vn) : -1};
  };
  auto t0 = std::chrono::steady_clock::now();
  std::vector<int64_t> order;
  int64_t order_epoch = -1, samples = 0, steps = 0;
  std::vector<int64_t> sum_sent(static_cast<size_t>(world.size()), 0), sum_theory(sum_sent), peaks(sum_sent), peak_bytes(sum_sent);
  constexpr size_t kFields = 5;  // sent, theory, peak micro-batches, peak bytes, dp bytes
  while (st.step() < total) {
    const int64_t step = st.step(), epoch = step / spe, b = step % spe;
    if (epoch != order_epoch) {
      order = o.epoch_order(n, o.seed, epoch);
      order_epoch = epoch;
    }
    const int64_t b0 = b * o.batch, b1 = std::min(n, (b + 1) * o.batch), rows = b1 - b0;
    const double cur_lr = train::lr_at(o.lr, step, total, o.warmup, o.cosine);
    auto s0 = std::chrono::steady_clock::now();
    auto [r0, r1] = train::split_rows(rows, D, mesh->dp_index);
    Tensor x = o.gather_rows(tx, order, static_cast<size_t>(b0 + r0), static_cast<size_t>(b0 + r1));
    Tensor y = o.gather_rows(ty, order, static_cast<size_t>(b0 + r0), static_cast<size_t>(b0 + r1));
    auto ps = st.compute_gradients(x, y, rows, o.micro_batches, *sched, *mesh->pp, **meta, static_cast<uint64_t>(mesh->dp_index));
    if (!ps.is_ok()) {
      std::string peers;  // the pp communicator's ranks are stages: name their world ranks
      for (int s = 0; s < P; ++s) peers += (s ? ", " : "") + std::to_string(s) + " = world rank " + std::to_string(s * D + mesh->dp_index);
      return fatal("step " + std::to_string(step) + ": " + ps.status().message() + " (stages: " + peers + ")");
    }
    const uint64_t dp0 = mesh->dp->stats().total();
    if (D > 1) {
      // Data parallel: the gradients summed over the dp communicator (each micro-batch was
      // already weighted by its share of the global batch).
      int64_t count = 0;
      for (const Tensor& g : st.grads()) count += g.numel();
      std::vector<float> flat(static_cast<size_t>(count));
      size_t at = 0;
      for (const Tensor& g : st.grads()) {
        std::copy(g.data_as<float>(), g.data_as<float>() + g.numel(), flat.begin() + static_cast<long>(at));
        at += static_cast<size_t>(g.numel());
      }
      Status s = mesh->dp->all_reduce(flat.data(), flat.data(), count, DType::kFloat32, train::ReduceOp::kSum);
      if (!s.is_ok()) return fatal("step " + std::to_string(step) + ": gradient all-reduce over the dp communicator: " + s.message());
      at = 0;
      for (Tensor& g : st.grads()) {
        std::copy(flat.begin() + static_cast<long>(at), flat.begin() + static_cast<long>(at + static_cast<size_t>(g.numel())), g.data_as<float>());
        at += static_cast<size_t>(g.numel());
      }
    }
    const uint64_t dp_sent = mesh->dp->stats().total() - dp0;
    Status s = st.apply_gradients(cur_lr, pctrl->get());
    if (!s.is_ok()) return fatal("step " + std::to_string(step) + ": " + s.message());
    double gl = last ? ps->loss : 0;
    s = ctrl.all_reduce(&gl, &gl, 1, DType::kFloat64, train::ReduceOp::kSum);
    int64_t mine[kFields] = {static_cast<int64_t>(ps->sent_bytes), static_cast<int64_t>(ps->sent_bytes_theory), ps->peak_micro_batches,
                             static_cast<int64_t>(ps->peak_activation_bytes), static_cast<int64_t>(dp_sent)};
    std::vector<int64_t> all(kFields * static_cast<size_t>(world.size()));
    if (s.is_ok()) s = ctrl.all_gather(mine, all.data(), kFields, DType::kInt64);
    if (!s.is_ok()) return fatal("step " + std::to_string(step) + ": " + s.message());
    ++steps;
    for (int r = 0; r < world.size(); ++r) {
      sum_sent[r] += all[kFields * r];
      sum_theory[r] += all[kFields * r + 1];
      peaks[r] = std::max(peaks[r], all[kFields * r + 2]);
      peak_bytes[r] = std::max(peak_bytes[r], all[kFields * r + 3]);
    }
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    samples += rows;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (root) {
      metrics << "{\"step\":" << st.step() << ",\"epoch\":" << epoch << ",\"loss\":" << num(gl) << ",\"lr\":" << num(cur_lr)
              << ",\"batch\":" << rows << ",\"step_s\":" << num(dt) << ",\"samples_per_s\":" << num(samples / std::max(elapsed, 1e-9))
              << ",\"world_size\":" << world.size() << ",\"pp\":" << P << ",\"dp\":" << D << ",\"micro_batches\":" << o.micro_batches
              << ",\"schedule\":\"" << o.schedule << "\",\"pp_bytes_per_rank\":" << list(all, 0, kFields)
              << ",\"pp_bytes_theory_per_rank\":" << list(all, 1, kFields) << ",\"peak_micro_batches_per_rank\":" << list(all, 2, kFields)
              << ",\"peak_activation_bytes_per_rank\":" << list(all, 3, kFields) << ",\"dp_bytes_per_rank\":" << list(all, 4, kFields)
              << "}\n";
      metrics.flush();
    }
    const bool epoch_end = st.step() % spe == 0 || st.step() == total;
    if ((o.ckpt_every > 0 && st.step() % o.ckpt_every == 0) || epoch_end) {
      if (epoch_end) {
        auto v = validate();
        if (!v.is_ok()) return fatal(v.status().message());
        if (root) {
          metrics << "{\"epoch\":" << epoch << ",\"step\":" << st.step() << ",\"val_loss\":" << num(v->first)
                  << ",\"val_accuracy\":" << num(v->second) << "}\n";
          metrics.flush();
          if (!o.quiet) std::cerr << "epoch " << epoch + 1 << ": loss " << gl << ", val loss " << v->first << "\n";
        }
      }
      s = gather_write(o.ckpt_path);
      if (!s.is_ok()) return fatal("--checkpoint: " + s.message());
    }
  }
  auto v = validate();
  if (!v.is_ok()) return fatal(v.status().message());
  Status s = gather_write(o.out_path);
  if (!s.is_ok()) return fatal("--out: " + s.message());
  s = ctrl.barrier();
  if (!s.is_ok()) return fail(s.message());
  if (root) {
    std::printf("pipeline parallel: %d stages x %d data-parallel ranks, %d micro-batches, schedule %s, %lld steps\n", P, D,
                o.micro_batches, o.schedule.c_str(), static_cast<long long>(steps));
    for (int r = 0; r < world.size(); ++r)
      std::printf("  rank %d (stage %d, dp %d): sent %lld bytes per step on the pp communicator (theory %lld: its crossing "
                  "activations forward, their gradients back); peak %lld micro-batches of activations held, %lld bytes "
                  "(1F1B bound min(P - stage, M) = %d, GPipe M = %d)\n",
                  r, r / D, r % D, static_cast<long long>(steps ? sum_sent[r] / steps : 0),
                  static_cast<long long>(steps ? sum_theory[r] / steps : 0), static_cast<long long>(peaks[r]),
                  static_cast<long long>(peak_bytes[r]), std::min(P - r / D, o.micro_batches), o.micro_batches);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("final: val_loss %.6f", v->first);
    if (o.ce) std::printf(" val_accuracy %.4f", v->second);
    std::printf(" (%lld samples) after %lld steps; %.1f s training; wrote %s\n", static_cast<long long>(vx.dim(0)),
                static_cast<long long>(st.step()), secs, o.out_path.c_str());
  }
  return 0;
}

}  // namespace tessera::finetune
