#!/usr/bin/env python3
"""Data-parallel tessera-finetune under mpirun against single-process training.

  --case equiv --np N [--optimizer sgd|adamw] [--bucket-mb M] [--classes C]:
      a small transformer-style MLP block (MatMul+Add, LayerNormalization, Gelu written with
      Erf, MatMul+Add, a linear head; softmax cross-entropy), 5 steps on a global batch of
      10 rows (uneven slices at 4 ranks), trained once in one process and once with
      `mpirun -np N tessera-finetune --parallel dp=N`. Checks:
        - the final weights agree within 1e-5 (max abs diff), and they moved (> 1e-3) from
          the initial ones;
        - the per-step losses agree within 1e-5;
        - every rank's measured gradient bytes per step (CommStats of the MPI ring) equal
          the ring volume computed here: one bucket (the default size): 2G - c_r - c_(r+1)
          with c the ring chunks of G/4 elements, = 2(N-1)/N * G when N divides G/4; small
          buckets (--bucket-mb): the sum over buckets reported by the run, the buckets'
          elements adding up to G/4; every bucket started during the backward pass
          (as soon as its gradients were made); --zero 1 (optimizer state sharded): a reduce-scatter
          and an all-gather of ceil(P/N) elements per rank, 2 (N-1) ceil(P/N) * 4 bytes;
          --zero 2 (and gradients; every parameter split along dim 0, rank 0 holding the most
          rows, C = sum of its rows' elements): a reduce-scatter and an all-gather of C
          elements, 2 (N-1) C * 4 bytes (= 2(N-1)/N * G when N divides every dim 0; C is
          additive over buckets, so the same with --bucket-mb, which must give several);
          --zero 3 (and parameters, FSDP): the reduce-scatter plus one all-gather of each
          parameter (c_p elements of rank 0's rows) before the forward pass and one more
          before the backward pass for the parameters the backward pass reads (g_p = 2 for
          BACKWARD_READS, else 1; the run's plan must say the same), (N-1) * 4 *
          (C + sum_p g_p c_p), at most 3(N-1)/N * P * 4; and every rank's peak of gathered
          parameter bytes is below the parameter bytes (the parameters really are freed
          after use);
        - both final models (with their optimizer state; the data-parallel one gathered
          from the shards under ZeRO) resumed in ONE process for 2 more steps end within
          1e-5 of each other: a data-parallel checkpoint continues at world size 1.
  --case kill --np N [--zero K]: rank 1 killed (SIGKILL) after step 2 of a long run: every other rank
      and mpirun must exit non-zero within --comm-timeout + slack; --case hang: rank 1
      stopped (SIGSTOP): the others must fail naming rank 1.
  --case resume --zero K: a ZeRO-K checkpoint saved at -np 2 after 5 steps (weight and state
      chunks, checked with `tessera inspect`) resumes in one process and at -np 4 (--zero K)
      for 2 more steps: both end within 1e-5 of 7 uninterrupted single-process steps, and
      `tessera run` runs the final model.
  --case bad_input: --parallel dp=3 under -np 2, --parallel tp=2, another model on rank 1,
      another --lr on rank 1, --bucket-mb 0, --zero 1 and --zero 3 without --parallel, another
      sharded checkpoint on rank 1, a sharded checkpoint with a chunk taken out (--drop-chunk,
      in one process and at 2 ranks): each exits non-zero (within 60 s) with a message naming
      the culprit.
Prints a table row for the README. Exit 77 (skip) without onnx.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("skip: the onnx package is missing")
    sys.exit(77)


def run(cmd, check=True, timeout=300):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def build_model(rng, d_in=8, hidden=16, classes=4, ffn=0):
    """ffn > 0 (tests/mpi/tp_test.py): the Gelu sits inside an MLP pair, LayerNorm -> fc2
    [hidden, ffn] + b2 -> Gelu -> fc_out [ffn, hidden] + b_out -> residual, whose hidden
    size ffn is what --shard tp=N cuts."""
    w = {"w1": rng.normal(0, 0.4, (d_in, hidden)), "b1": rng.normal(0, 0.1, hidden),
         "ln_scale": 1 + rng.normal(0, 0.1, hidden), "ln_bias": rng.normal(0, 0.1, hidden),
         "w2": rng.normal(0, 0.3, (hidden, hidden)), "b2": rng.normal(0, 0.1, hidden),
         "w3": rng.normal(0, 0.3, (hidden, classes)), "b3": rng.normal(0, 0.1, classes)}
    if ffn:
        w.update(w2=rng.normal(0, 0.3, (hidden, ffn)), b2=rng.normal(0, 0.1, ffn),
                 w_out=rng.normal(0, 0.3, (ffn, hidden)), b_out=rng.normal(0, 0.1, hidden))
    w = {k: v.astype(np.float32) for k, v in w.items()}
    consts = {"half": np.array(0.5, np.float32), "one": np.array(1.0, np.float32),
              "sqrt2": np.array(np.sqrt(2.0), np.float32)}
    n = helper.make_node
    nodes = [n("MatMul", ["x", "w1"], ["h1"], name="fc1"), n("Add", ["h1", "b1"], ["h1b"], name="fc1_bias"),
             n("LayerNormalization", ["h1b", "ln_scale", "ln_bias"], ["ln"], name="ln", axis=-1, epsilon=1e-5),
             # Gelu(x) = 0.5 x (1 + erf(x / sqrt(2)))
             n("Div", ["ln", "sqrt2"], ["g0"], name="gelu_div"), n("Erf", ["g0"], ["g1"], name="gelu_erf"),
             n("Add", ["g1", "one"], ["g2"], name="gelu_add"), n("Mul", ["ln", "g2"], ["g3"], name="gelu_mul"),
             n("Mul", ["g3", "half"], ["gelu"], name="gelu_half"),
             n("MatMul", ["gelu", "w2"], ["h2"], name="fc2"), n("Add", ["h2", "b2"], ["h2b"], name="fc2_bias"),
             n("Add", ["h2b", "h1b"], ["res"], name="residual"),
             n("MatMul", ["res", "w3"], ["h3"], name="head"), n("Add", ["h3", "b3"], ["out"], name="head_bias")]
    if ffn:  # fc2 becomes fc_out [ffn, hidden]; a new fc2 [hidden, ffn] + b2 feeds the Gelu
        for m in nodes:
            if m.name.startswith("gelu_"):
                m.input[:] = ["f1" if i == "ln" else i for i in m.input]
            if m.name == "fc2":
                m.name, m.input[1], m.output[0] = "fc_out", "w_out", "h_out"
            if m.name == "fc2_bias":
                m.name, m.input[0], m.input[1] = "fc_out_bias", "h_out", "b_out"
        nodes[3:3] = [n("MatMul", ["ln", "w2"], ["f0"], name="fc2"), n("Add", ["f0", "b2"], ["f1"], name="fc2_bias")]
    inits = [numpy_helper.from_array(v, k) for k, v in list(w.items()) + list(consts.items())]
    g = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", d_in])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", classes])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), w


def weights_of(args, tsr_path):
    onnx_path = tsr_path + ".export.onnx"
    run([args.tessera, "export", tsr_path, "-o", onnx_path])
    m = onnx.load(onnx_path)
    return {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}


def read_metrics(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def chunks(count, parts):
    base, extra = divmod(count, parts)
    return [base + (1 if r < extra else 0) for r in range(parts)]


def dim0_chunk(shape, parts):
    """Elements of rank 0's rows of a parameter split along dim 0 (rank 0 has the most)."""
    return chunks(shape[0], parts)[0] * int(np.prod(shape[1:], dtype=np.int64)) if len(shape) else 1


# The parameters of build_model's graph that its backward pass reads, from the gradient
# formulas: dX = dY W^T reads the weight of a MatMul whose input needs a gradient (w2, w3;
# not w1, whose input x is data), LayerNormalization's dX = (scale * dY - ...) / sigma reads
# its scale; the gradients of Add read neither addend (b1, b2, b3, ln_bias; their shapes are
# constants). ZeRO-3 all-gathers these a second time, before the backward pass.
BACKWARD_READS = {"w2", "w3", "ln_scale"}



def mpirun(args, np_):
    return [args.mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(np_)]


def prepare(args, classes, rows=50, ffn=0, convert_extra=(), build=None, x_dims=(8,)):
    work = args.work_dir
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    model, w0 = (build or build_model)(rng, classes=classes, ffn=ffn)
    onnx.save(model, os.path.join(work, "m.onnx"))
    r = run([args.tessera, "convert", os.path.join(work, "m.onnx"), "-o", os.path.join(work, "m.tsr")] + list(convert_extra))
    if convert_extra:
        print(r.stdout.strip())
    x = rng.normal(0, 1, (rows,) + tuple(x_dims)).astype(np.float32)
    y = rng.integers(0, classes, rows).astype(np.int64)
    np.savez(os.path.join(work, "train.npz"), x=x, y=y)
    np.savez(os.path.join(work, "val.npz"), x=x[:23], y=y[:23])
    return w0


def common_flags(args, epochs=1, steps=5, clip_norm="5"):
    """The training flags both runs of an equivalence test get (pp_test.py and tp_test.py
    too): --model m.tsr, batches of 10, SGD with Nesterov momentum, weight decay and
    clipping at `clip_norm`, or AdamW."""
    work = args.work_dir
    common = ["--model", os.path.join(work, "m.tsr"), "--train", os.path.join(work, "train.npz"),
              "--val", os.path.join(work, "val.npz"), "--epochs", str(epochs), "--batch-size", "10", "--max-steps", str(steps),
              "--optimizer", args.optimizer, "--lr", "0.05" if args.optimizer == "sgd" else "0.01", "--quiet"]
    if args.optimizer == "sgd":
        common += ["--momentum", "0.9", "--nesterov", "--weight-decay", "0.01", "--clip-norm", clip_norm]
    else:
        common += ["--weight-decay", "0.05"]
    return common


def resume_flags(args, common, steps):
    """`common` without --model (the run resumes a checkpoint instead), for 2 epochs of up
    to `steps` steps: the steps after the saved ones are epoch 2's first batches."""
    more = [c for c in common if c not in ("--model", os.path.join(args.work_dir, "m.tsr"))]
    more[more.index("--epochs") + 1] = "2"
    more[more.index("--max-steps") + 1] = str(steps)
    return more


def compare_training(args, w0, single, other, what, steps=5):
    """The run `other` (a .tsr written by a parallel run) against `single` (one process),
    both started from the weights w0: the final weights within 1e-5 (max abs diff), the
    weights moved (> 1e-3, else the comparison says nothing), `steps` steps each with losses
    within 1e-5. Returns (failures, max weight diff, max loss diff, other's per-step metrics,
    other's weights)."""
    ws, wo = weights_of(args, single), weights_of(args, other)
    fail = []
    diff = max(float(np.abs(ws[k] - wo[k]).max()) for k in w0)
    moved = max(float(np.abs(ws[k] - w0[k]).max()) for k in w0)
    if diff > 1e-5:
        fail.append(f"max weight diff {diff:.3g} > 1e-5: " +
                    ", ".join(f"{k} {float(np.abs(ws[k] - wo[k]).max()):.3g}" for k in w0))
    if moved < 1e-3:
        fail.append(f"the weights hardly moved ({moved:.3g}): the comparison says nothing")
    ms = [m for m in read_metrics(single + ".metrics.jsonl") if "loss" in m]
    mo = [m for m in read_metrics(other + ".metrics.jsonl") if "loss" in m]
    if len(ms) != steps or len(mo) != steps:
        fail.append(f"expected {steps} steps, got {len(ms)} single and {len(mo)} {what}")
    loss_diff = max([abs(a["loss"] - b["loss"]) for a, b in zip(ms, mo)] or [1.0])
    if loss_diff > 1e-5:
        fail.append(f"per-step loss differs by {loss_diff:.3g}: {[a['loss'] for a in ms]} vs {[b['loss'] for b in mo]}")
    return fail, diff, loss_diff, mo, wo


def check_bad_inputs(cases, timeout=60):
    """Runs every (name, command, message) of `cases`: each must exit non-zero within
    `timeout` s (subprocess.TimeoutExpired otherwise) with `message` (a string, or a list of
    strings that must all appear) in its stdout or stderr. Prints one line per case;
    returns the failures."""
    fail = []
    for name, cmd, want in cases:
        t0 = time.time()
        r = run(cmd, check=False, timeout=timeout)
        text = r.stdout + r.stderr
        print(f"[{name}] exit {r.returncode} after {time.time() - t0:.1f} s: "
              f"{[l for l in text.splitlines() if 'error' in l.lower()][:2]}")
        if r.returncode == 0:
            fail.append(f"{name}: exit 0")
        for w in [want] if isinstance(want, str) else want:
            if w not in text:
                fail.append(f"{name}: no message with '{w}':\n{text[-1500:]}")
    return fail


def finish(fail, ok="ok"):
    """Prints the failures and returns exit status 1, or prints `ok` and returns 0."""
    if fail:
        print("FAIL:\n  " + "\n  ".join(fail))
        return 1
    print(ok)
    return 0


def table_row(*cells):
    """Prints one row of a README table: | a | b | ... |"""
    print("| " + " | ".join(str(c) for c in cells) + " |")


def common_args(ap, cases):
    """The arguments every MPI test script takes: the binaries, the work directory, the case."""
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--finetune", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--case", required=True, choices=cases)


def max_diff(a, b):
    return max(float(np.abs(a[k] - b[k]).max()) for k in a)


def case_equiv(args):
    work = args.work_dir
    w0 = prepare(args, args.classes)
    grad_bytes = 4 * sum(v.size for v in w0.values())
    common = common_flags(args)
    single = os.path.join(work, "single.tsr")
    t0 = time.time()
    run([args.finetune] + common + ["--out", single])
    t1 = time.time()
    dp = os.path.join(work, "dp.tsr")
    extra = ["--bucket-mb", str(args.bucket_mb)] if args.bucket_mb else []
    if args.zero:
        extra += ["--zero", str(args.zero)]
    r = run(mpirun(args, args.np) + [args.finetune] + common + ["--out", dp, "--parallel", f"dp={args.np}"] + extra,
            timeout=120)
    t2 = time.time()
    print(r.stdout.strip())
    fail, diff, loss_diff, md, _ = compare_training(args, w0, single, dp, "data parallel")
    n = args.np
    formula = 2 * (n - 1) / n * grad_bytes
    measured = md[-1]["comm_bytes_per_rank"] if md else []
    for m in md:
        if m["gradient_bytes"] != grad_bytes:
            fail.append(f"gradient bytes {m['gradient_bytes']} != {grad_bytes} (4 bytes x the model's parameters)")
        if abs(m["comm_bytes_theory"] - formula) > 1e-6 * formula:
            fail.append(f"printed theory {m['comm_bytes_theory']} != 2(N-1)/N * G = {formula}")
        if len(m["comm_bytes_per_rank"]) != n:
            fail.append(f"{len(m['comm_bytes_per_rank'])} ranks reported, expected {n}")
        if m["comm_bytes_per_rank"] != m["comm_bytes_ring_per_rank"]:
            fail.append(f"step {m['step']}: measured bytes {m['comm_bytes_per_rank']} != ring volume {m['comm_bytes_ring_per_rank']}")
        if args.zero != 1 and m.get("buckets_started_in_backward") != m["buckets"]:
            fail.append(f"step {m['step']}: {m.get('buckets_started_in_backward')} of {m['buckets']} buckets started "
                        "during the backward pass (every gradient of this model comes from a backward node)")
        if args.zero in (2, 3):
            c = sum(dim0_chunk(v.shape, n) for v in w0.values())
            g = {k: 2 if k in BACKWARD_READS else 1 for k in w0}
            if args.zero == 3 and m.get("gathers_per_param") != g:
                fail.append(f"step {m['step']}: the run plans all-gathers per parameter {m.get('gathers_per_param')}, expected {g}")
            gathers = sum(dim0_chunk(v.shape, n) * g[k] for k, v in w0.items())
            want = [4 * (n - 1) * (2 * c if args.zero == 2 else c + gathers)] * n
            if m["comm_bytes_per_rank"] != want:
                fail.append(f"step {m['step']}: ZeRO-{args.zero} measured {m['comm_bytes_per_rank']} != theory computed here {want}")
            # The packed gradient buckets (N C * 4 bytes in all) are freed as their
            # reduce-scatters complete (at most 2 in flight): with several buckets the peak is below.
            gb = m.get("gradient_buffer_peak_bytes_per_rank", [])
            if len(gb) != n or any(x <= 0 or x > 4 * n * c or (m["buckets"] > 2 and x >= 4 * n * c) for x in gb):
                fail.append(f"step {m['step']}: peak packed-gradient bytes per rank {gb}: expected in (0, {4 * n * c}]"
                            f"{', below it with ' + str(m['buckets']) + ' buckets' if m['buckets'] > 2 else ''}")
            if args.bucket_mb and m["buckets"] < 2:
                fail.append(f"step {m['step']}: {m['buckets']} bucket(s) with --bucket-mb {args.bucket_mb}: the test wants several")
            divides = all(v.shape[0] % n == 0 for v in w0.values())
            if args.zero == 2 and divides and any(b != formula for b in m["comm_bytes_per_rank"]):
                fail.append(f"step {m['step']}: measured {m['comm_bytes_per_rank']} != 2(N-1)/N * G = {formula}")
            if args.zero == 3 and divides and any(b > 3 * (n - 1) / n * grad_bytes for b in m["comm_bytes_per_rank"]):
                fail.append(f"step {m['step']}: measured {m['comm_bytes_per_rank']} > 3(N-1)/N * P * 4")
            if args.zero == 3:
                peaks = m.get("gathered_peak_bytes_per_rank", [])
                if len(peaks) != n or not all(0 < p < grad_bytes for p in peaks) or m.get("parameter_bytes") != grad_bytes:
                    fail.append(f"step {m['step']}: peak gathered parameter bytes per rank {peaks} not all in (0, {grad_bytes})")
        elif args.zero:
            p_ = grad_bytes // 4
            want = [8 * (n - 1) * (-(-p_ // n))] * n
            if m["comm_bytes_per_rank"] != want:
                fail.append(f"step {m['step']}: ZeRO-1 measured {m['comm_bytes_per_rank']} != 2(N-1)ceil(P/N)*4 = {want}")
            if p_ % n == 0 and any(b != formula for b in m["comm_bytes_per_rank"]):
                fail.append(f"step {m['step']}: measured {m['comm_bytes_per_rank']} != 2(N-1)/N * G = {formula}")
        elif m["buckets"] == 1:
            c = chunks(grad_bytes // 4, n)
            want = [4 * (2 * (grad_bytes // 4) - c[q] - c[(q + 1) % n]) for q in range(n)]
            if m["comm_bytes_per_rank"] != want:
                fail.append(f"step {m['step']}: measured {m['comm_bytes_per_rank']} != ring volume computed here {want}")
            if (grad_bytes // 4) % n == 0 and any(b != formula for b in m["comm_bytes_per_rank"]):
                fail.append(f"step {m['step']}: measured {m['comm_bytes_per_rank']} != 2(N-1)/N * G = {formula}")
        elif args.bucket_mb == 0:
            fail.append(f"{m['buckets']} buckets at the default 25 MiB for {grad_bytes} bytes")
    # Both checkpoints resumed in one process for 2 more steps (epoch 2's first batches).
    more = resume_flags(args, common, 7)
    rs, rd = os.path.join(work, "single_more.tsr"), os.path.join(work, "dp_more.tsr")
    run([args.finetune, "--resume", single] + more + ["--out", rs])
    run([args.finetune, "--resume", dp] + more + ["--out", rd])
    wrs, wrd = weights_of(args, rs), weights_of(args, rd)
    resume_diff = max(float(np.abs(wrs[k] - wrd[k]).max()) for k in w0)
    if resume_diff > 1e-5:
        fail.append(f"resumed in one process, the data-parallel checkpoint ends {resume_diff:.3g} away from the single one")
    # The theory column: 2(N-1)/N * G for data parallelism, this stage's exact volume under ZeRO.
    theory = f"{formula:.1f}"
    if args.zero:
        theory = f"{want[0]}" + (f" (peak gathered {md[-1]['gathered_peak_bytes_per_rank'][0]} of {grad_bytes})"
                                 if args.zero == 3 and md else "")
    table_row(len(md), n, f"{args.optimizer}{f' ZeRO-{args.zero}' if args.zero else ''}", md[-1]['buckets'] if md else '?',
              f"{diff:.2g}", f"{loss_diff:.2g}", grad_bytes, measured, theory, f"{resume_diff:.2g}", f"{t1 - t0:.1f} s / {t2 - t1:.1f} s")
    return finish(fail, f"ok: dp={n} matches single-process training: max weight diff {diff:.3g}, loss diff {loss_diff:.3g}; "
                  f"bytes per rank per step {measured} (2(N-1)/N * {grad_bytes} = {formula:.1f})"
                  + (f"; peak packed-gradient bytes per rank {md[-1]['gradient_buffer_peak_bytes_per_rank']} ({md[-1]['buckets']} buckets)"
                     if args.zero in (2, 3) else "")
                  + (f"; peak gathered parameter bytes per rank {md[-1]['gathered_peak_bytes_per_rank']} of {grad_bytes}"
                     if args.zero == 3 else ""))


def case_resume(args):
    """A ZeRO checkpoint saved at 2 ranks resumes at 1 and at 4 ranks."""
    work = args.work_dir
    w0 = prepare(args, args.classes)
    ref = os.path.join(work, "ref.tsr")
    run([args.finetune] + common_flags(args, epochs=2, steps=7) + ["--out", ref])
    saved = os.path.join(work, "saved.tsr")  # its checkpoint: saved.ckpt.tsr, after step 5 (the epoch's end)
    zero = ["--zero", str(args.zero)]
    run(mpirun(args, 2) + [args.finetune] + common_flags(args, epochs=2, steps=5) + ["--out", saved, "--parallel", "dp=2"] + zero,
        timeout=120)
    ckpt = os.path.join(work, "saved.ckpt.tsr")
    info = json.loads(run([args.tessera, "inspect", "--json", ckpt]).stdout)
    fail = []
    sh = info.get("sharding", {})
    if sh.get("tensor_shardings") != len(w0) or not sh.get("weight_chunks"):
        fail.append(f"the checkpoint is not sharded: {sh} (expected {len(w0)} tensor shardings and weight chunks)")
    resume = resume_flags(args, common_flags(args), 7)
    r1, r4 = os.path.join(work, "resumed1.tsr"), os.path.join(work, "resumed4.tsr")
    run([args.finetune, "--resume", ckpt] + resume + ["--out", r1])
    out4 = run(mpirun(args, 4) + [args.finetune, "--resume", ckpt] + resume + ["--out", r4, "--parallel", "dp=4"] + zero,
               timeout=120)
    print(out4.stdout.strip())
    wref, w5 = weights_of(args, ref), weights_of(args, saved)
    d1, d4 = max_diff(wref, weights_of(args, r1)), max_diff(wref, weights_of(args, r4))
    moved = max_diff(wref, w5)
    if d1 > 1e-5:
        fail.append(f"resumed in one process: max weight diff {d1:.3g} from 7 uninterrupted steps > 1e-5")
    if d4 > 1e-5:
        fail.append(f"resumed at 4 ranks (ZeRO-{args.zero}): max weight diff {d4:.3g} from 7 uninterrupted steps > 1e-5")
    if moved < 1e-4:
        fail.append(f"steps 6 and 7 hardly moved the weights ({moved:.3g}): the comparison says nothing")
    # The final model of a sharded run is a plain .tsr that `tessera run` runs.
    np.save(os.path.join(work, "x.npy"), np.load(os.path.join(work, "train.npz"))["x"][:3])
    r = run([args.tessera, "run", r4, "--input", "x=" + os.path.join(work, "x.npy"), "--output-dir", os.path.join(work, "run_out")],
            check=False)
    if r.returncode != 0 or not os.path.exists(os.path.join(work, "run_out", "out.npy")):
        fail.append(f"tessera run on the ZeRO-{args.zero} output failed: {r.stdout[-500:]} {r.stderr[-500:]}")
    table_row(f"resume ZeRO-{args.zero}", f"saved at 2 ranks after 5 steps, {sh.get('weight_chunks')} chunks",
              f"+2 steps at 1 rank: {d1:.2g}", f"+2 steps at 4 ranks: {d4:.2g}", f"(steps 6-7 moved the weights {moved:.2g})")
    return finish(fail, f"ok: the ZeRO-{args.zero} checkpoint of 2 ranks resumed at 1 and 4 ranks ends within {max(d1, d4):.3g} "
                  "of uninterrupted single-process training")


def ranks_of(marker):
    """pid -> rank of the tessera-finetune processes whose command line holds `marker`."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            if not cmd or not cmd[0].endswith(b"tessera-finetune") or marker.encode() not in b" ".join(cmd):
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
            if b"OMPI_COMM_WORLD_RANK" in env:
                out[int(pid)] = int(env[b"OMPI_COMM_WORLD_RANK"])
        except OSError:
            continue
    return out


def case_fault(args, mode, prepare_kw=None):
    """prepare_kw: another model (tests/mpi/tp_test.py)."""
    work = args.work_dir
    prepare(args, 4, rows=200, **(prepare_kw or {}))
    timeout = 5
    out = os.path.join(work, "dp.tsr")
    cmd = mpirun(args, args.np) + [args.finetune, "--model", os.path.join(work, "m.tsr"),
                                   "--train", os.path.join(work, "train.npz"), "--val", os.path.join(work, "val.npz"),
                                   "--epochs", "100000", "--batch-size", "10", "--quiet", "--out", out,
                                   "--parallel", getattr(args, "parallel", None) or f"dp={args.np}",
                                   "--comm-timeout", str(timeout)] + list(getattr(args, "fault_extra", []))
    if getattr(args, "zero", 0):
        cmd += ["--zero", str(args.zero)]
    metrics = out + ".metrics.jsonl"
    if os.path.exists(metrics):  # a previous run's: the wait below must see this run's steps
        os.remove(metrics)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None:
        if os.path.exists(metrics) and sum(1 for _ in open(metrics)) >= 2:
            break
        time.sleep(0.1)
    if p.poll() is not None:
        print(p.stdout.read())
        raise SystemExit(f"FAIL: the run ended (exit {p.returncode}) before it could be interrupted")
    victims = [pid for pid, r in ranks_of(work).items() if r == 1]
    if len(victims) != 1:
        p.kill()
        raise SystemExit(f"FAIL: could not find rank 1 ({ranks_of(work)})")
    t0 = time.time()
    os.kill(victims[0], signal.SIGKILL if mode == "kill" else signal.SIGSTOP)
    bound = timeout + 3 + 25  # the comm timeout, its 3 s of pings, start-up/teardown slack on a loaded machine
    try:
        text, _ = p.communicate(timeout=bound + 30)
    except subprocess.TimeoutExpired:
        p.kill()
        text, _ = p.communicate()
        print(text[-3000:])
        raise SystemExit(f"FAIL: the job still ran {bound + 30} s after rank 1 was {mode}ed")
    elapsed = time.time() - t0
    print(text[-3000:])
    print(f"[dp_test] {mode}: rank 1 of {args.np}; mpirun exit {p.returncode} after {elapsed:.1f} s (bound {bound} s)")
    fail = []
    if p.returncode == 0:
        fail.append("mpirun exited 0")
    if elapsed > bound:
        fail.append(f"took {elapsed:.1f} s > {bound} s")
    if mode == "hang" and "rank(s) 1 " not in text:
        fail.append("no error naming rank 1")
    if mode == "kill" and not any(s in text for s in ("rank(s) 1 ", "rank 1", "Process name: [[")):
        fail.append("no message naming rank 1")
    left = ranks_of(work)
    if left:
        fail.append(f"processes left behind: {left}")
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    return finish(fail)


def case_bad_input(args):
    work = args.work_dir
    prepare(args, 4)
    # A second model: the same graph with other weights.
    model, _ = build_model(np.random.default_rng(8), classes=4)
    onnx.save(model, os.path.join(work, "m2.onnx"))
    run([args.tessera, "convert", os.path.join(work, "m2.onnx"), "-o", os.path.join(work, "m2.tsr")])

    def ft(model="m.tsr", extra=()):
        return [args.finetune, "--model", os.path.join(work, model), "--train", os.path.join(work, "train.npz"),
                "--val", os.path.join(work, "val.npz"), "--epochs", "1", "--batch-size", "10", "--quiet",
                "--out", os.path.join(work, "o.tsr"), "--comm-timeout", "10"] + list(extra)

    mp = [args.mpirun, "--allow-run-as-root", "--oversubscribe"]
    cases = [
        ("world size", mp + ["-np", "2"] + ft(extra=["--parallel", "dp=3"]), "--parallel dp=3 but the job has 2 ranks"),
        ("tp", ft(extra=["--parallel", "tp=2"]), "but the job has 1 ranks (launch with mpirun -np 2)"),
        ("parallel syntax", ft(extra=["--parallel", "dp=2,xx=3"]), "--parallel 'dp=2,xx=3': 'xx=3' is not dp=N, tp=N or pp=N"),
        ("model", mp + ["-np", "1"] + ft(extra=["--parallel", "dp=2"]) + [":", "-np", "1"] +
         ft("m2.tsr", ["--parallel", "dp=2"]), "rank 1 differs in the model (--model)"),
        ("flags", mp + ["-np", "1"] + ft(extra=["--parallel", "dp=2"]) + [":", "-np", "1"] +
         ft(extra=["--parallel", "dp=2", "--lr", "0.5"]), "rank 1 differs in the command-line flags"),
        ("bucket", mp + ["-np", "2"] + ft(extra=["--parallel", "dp=2", "--bucket-mb", "0"]), "--bucket-mb"),
        # A timeout far below the ranks' start-up skew: the first collective times out; the
        # message gives the timeout as given (it said "within 0 s") and that it may be too short.
        ("tiny timeout", mp + ["-np", "2"] + ft(extra=["--parallel", "dp=2"])[:-3] + ["1e-6", "--parallel", "dp=2"],
         "no progress within 1e-06 s"),
        ("zero without dp", ft(extra=["--zero", "1"]), "--zero 1 shards the optimizer state over data-parallel ranks"),
        ("zero 3 without dp", ft(extra=["--zero", "3"]),
         "--zero 3 shards the optimizer state, gradients and parameters over data-parallel ranks: give --parallel dp=N"),
    ]
    # Two ZeRO-3 checkpoints of 2 ranks (other learning rates); rank 1 resumes the other one.
    ck = []
    for lr in ("0.05", "0.02"):
        out = os.path.join(work, f"z3_{lr}.tsr")
        run(mp + ["-np", "2", args.finetune, "--model", os.path.join(work, "m.tsr"), "--train", os.path.join(work, "train.npz"),
                  "--val", os.path.join(work, "val.npz"), "--batch-size", "10", "--max-steps", "1", "--lr", lr, "--quiet",
                  "--out", out, "--parallel", "dp=2", "--zero", "3"], timeout=60)
        ck.append(os.path.join(work, f"z3_{lr}.ckpt.tsr"))

    def resume(path):
        return [args.finetune, "--resume", path, "--train", os.path.join(work, "train.npz"), "--val", os.path.join(work, "val.npz"),
                "--epochs", "1", "--batch-size", "10", "--quiet", "--out", os.path.join(work, "o.tsr"), "--comm-timeout", "10",
                "--parallel", "dp=2", "--zero", "3"]
    cases.append(("other checkpoint", mp + ["-np", "1"] + resume(ck[0]) + [":", "-np", "1"] + resume(ck[1]),
                  "rank 1 differs in the checkpoint (--resume)"))
    cases.append(("other checkpoint: chunks", cases[-1][1], "rank 1 differs in the sharding of the checkpoint"))
    # The first checkpoint without rank 1's rows of w2 (rows 8..15 at 2 ranks): in one process
    # and at 2 ranks, the error names w2 and the first element no chunk holds.
    if args.drop_chunk:
        holed = os.path.join(work, "holed.ckpt.tsr")
        run([args.drop_chunk, ck[0], holed, "w2", "8"])
        want = "parameter 'w2' [16,16]: its chunks do not cover element [8,0]"
        cases.append(("incomplete checkpoint", resume(holed)[:-4], want))
        cases.append(("incomplete checkpoint, 2 ranks", mp + ["-np", "2"] + resume(holed), want))
        # Overlapping chunks: rank 0's rows of w2 written twice.
        dup = os.path.join(work, "dup.ckpt.tsr")
        run([args.drop_chunk, "--duplicate", ck[0], dup, "w2", "0"])
        cases.append(("overlapping chunks", resume(dup)[:-4], "parameter 'w2': element [0,0] is in more than one chunk"))
        # Chunks of w2 [16,16] claiming to be w3's [16,4]: the reader names the chunk and the dim.
        other = os.path.join(work, "other_shape.ckpt.tsr")
        run([args.drop_chunk, "--retarget", ck[0], other, "w2", "w3"])
        cases.append(("chunks of another shape", resume(other)[:-4], "weight chunk of 'w3': offset 0 + size 16 outside dim 1 of [16,4]"))
        # An AdamW ZeRO-1 checkpoint whose w2 exp_avg chunks are named as SGD's momentum
        # buffer: resumed with AdamW it used to run (exit 0), w2's exp_avg silently restarted
        # from zeros and the stray state carried along; now an error names the state.
        run(mp + ["-np", "2", args.finetune, "--model", os.path.join(work, "m.tsr"), "--train", os.path.join(work, "train.npz"),
                  "--val", os.path.join(work, "val.npz"), "--batch-size", "10", "--max-steps", "1", "--lr", "0.01", "--quiet",
                  "--optimizer", "adamw", "--out", os.path.join(work, "adamw.tsr"), "--parallel", "dp=2", "--zero", "1"], timeout=60)
        renamed = os.path.join(work, "renamed.ckpt.tsr")
        run([args.drop_chunk, "--rename-state", os.path.join(work, "adamw.ckpt.tsr"), renamed, "w2", "exp_avg", "momentum_buffer"])
        want = "optimizer state 'w2/momentum_buffer' is not one that adamw keeps ('exp_avg', 'exp_avg_sq')"
        cases.append(("state of another optimizer", resume(renamed)[:-4] + ["--optimizer", "adamw"], want))
        cases.append(("state of another optimizer, ZeRO-1 at 2 ranks",
                      mp + ["-np", "2"] + resume(renamed)[:-1] + ["1", "--optimizer", "adamw"], want))
        cases.append(("state of another optimizer, pp=2", mp + ["-np", "2"] + resume(renamed)[:-4] +
                      ["--optimizer", "adamw", "--parallel", "pp=2"], want))
    # A ZeRO checkpoint (no tensor-parallel annotations) resumed under tp=2.
    cases.append(("ZeRO checkpoint under tp", mp + ["-np", "2"] + resume(ck[0])[:-4] + ["--parallel", "tp=2"],
                  "--parallel tp=2: the model has no tensor-parallel sharding annotations"))
    return finish(check_bad_inputs(cases))


def main():
    ap = argparse.ArgumentParser()
    common_args(ap, ["equiv", "kill", "hang", "bad_input", "resume"])
    ap.add_argument("--drop-chunk", help="tessera_drop_chunk (tests/mpi/drop_chunk.cc), for bad_input")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--bucket-mb", type=float, default=0)
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--zero", type=int, default=0)
    args = ap.parse_args()
    if args.case == "equiv":
        return case_equiv(args)
    if args.case == "bad_input":
        return case_bad_input(args)
    if args.case == "resume":
        return case_resume(args)
    return case_fault(args, args.case)


if __name__ == "__main__":
    sys.exit(main())
