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
        - both final models (with their optimizer state; the data-parallel one gathered
          from the shards under ZeRO) resumed in ONE process for 2 more steps end within
          1e-5 of each other: a data-parallel checkpoint continues at world size 1.
  --case kill --np N: rank 1 killed (SIGKILL) after step 2 of a long run: every other rank
      and mpirun must exit non-zero within --comm-timeout + slack; --case hang: rank 1
      stopped (SIGSTOP): the others must fail naming rank 1.
  --case bad_input: --parallel dp=3 under -np 2, --parallel tp=2, another model on rank 1,
      another --lr on rank 1, --bucket-mb 0, --zero 2, --zero 1 without --parallel: each exits non-zero (within 60 s) with a
      message naming the culprit.
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


def case_equiv(args):
    work = args.work_dir
    w0 = prepare(args, args.classes)
    grad_bytes = 4 * sum(v.size for v in w0.values())
    common = ["--model", os.path.join(work, "m.tsr"), "--train", os.path.join(work, "train.npz"),
              "--val", os.path.join(work, "val.npz"), "--epochs", "1", "--batch-size", "10", "--max-steps", "5",
              "--optimizer", args.optimizer, "--lr", "0.05" if args.optimizer == "sgd" else "0.01", "--quiet"]
    if args.optimizer == "sgd":
        common += ["--momentum", "0.9", "--nesterov", "--weight-decay", "0.01", "--clip-norm", "5"]
    else:
        common += ["--weight-decay", "0.05"]
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
    ws, wd = weights_of(args, single), weights_of(args, dp)
    fail = []
    diff = max(float(np.abs(ws[k] - wd[k]).max()) for k in w0)
    moved = max(float(np.abs(ws[k] - w0[k]).max()) for k in w0)
    if diff > 1e-5:
        fail.append(f"max weight diff {diff:.3g} > 1e-5: " +
                    ", ".join(f"{k} {float(np.abs(ws[k] - wd[k]).max()):.3g}" for k in w0))
    if moved < 1e-3:
        fail.append(f"the weights hardly moved ({moved:.3g}): the comparison says nothing")
    ms = [m for m in read_metrics(single + ".metrics.jsonl") if "loss" in m]
    md = [m for m in read_metrics(dp + ".metrics.jsonl") if "loss" in m]
    if len(ms) != 5 or len(md) != 5:
        fail.append(f"expected 5 steps, got {len(ms)} single and {len(md)} data parallel")
    loss_diff = max(abs(a["loss"] - b["loss"]) for a, b in zip(ms, md))
    if loss_diff > 1e-5:
        fail.append(f"per-step loss differs by {loss_diff:.3g}: {[a['loss'] for a in ms]} vs {[b['loss'] for b in md]}")
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
        if not args.zero and m.get("buckets_started_in_backward") != m["buckets"]:
            fail.append(f"step {m['step']}: {m.get('buckets_started_in_backward')} of {m['buckets']} buckets started "
                        "during the backward pass (every gradient of this model comes from a backward node)")
        if args.zero:
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
    more = [c for c in common if c not in ("--model", os.path.join(work, "m.tsr"))]
    i = more.index("--epochs")
    more[i + 1] = "2"
    more[more.index("--max-steps") + 1] = "7"
    rs, rd = os.path.join(work, "single_more.tsr"), os.path.join(work, "dp_more.tsr")
    run([args.finetune, "--resume", single] + more + ["--out", rs])
    run([args.finetune, "--resume", dp] + more + ["--out", rd])
    wrs, wrd = weights_of(args, rs), weights_of(args, rd)
    resume_diff = max(float(np.abs(wrs[k] - wrd[k]).max()) for k in w0)
    if resume_diff > 1e-5:
        fail.append(f"resumed in one process, the data-parallel checkpoint ends {resume_diff:.3g} away from the single one")
    print(f"| {len(md)} | {n} | {args.optimizer}{' ZeRO-1' if args.zero else ''} | {md[-1]['buckets'] if md else '?'} | {diff:.2g} | {loss_diff:.2g} | "
          f"{grad_bytes} | {measured} | {formula:.1f} | {resume_diff:.2g} | {t1 - t0:.1f} s / {t2 - t1:.1f} s |")
    if fail:
        print("FAIL:\n  " + "\n  ".join(fail))
        return 1
    print(f"ok: dp={n} matches single-process training: max weight diff {diff:.3g}, loss diff {loss_diff:.3g}; "
          f"bytes per rank per step {measured} (2(N-1)/N * {grad_bytes} = {formula:.1f})")
    return 0


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
    if fail:
        print("FAIL: " + "; ".join(fail))
        return 1
    print("ok")
    return 0


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
        ("zero 2", ft(extra=["--parallel", "dp=1", "--zero", "2"]), "ZeRO stages 2 and 3 are not implemented yet"),
        ("zero without dp", ft(extra=["--zero", "1"]), "--zero 1 shards the optimizer state over data-parallel ranks"),
    ]
    fail = []
    for name, cmd, want in cases:
        t0 = time.time()
        r = run(cmd, check=False, timeout=60)
        text = r.stdout + r.stderr
        print(f"[{name}] exit {r.returncode} after {time.time() - t0:.1f} s: "
              f"{[l for l in text.splitlines() if 'error' in l.lower()][:2]}")
        if r.returncode == 0:
            fail.append(f"{name}: exit 0")
        if want not in text:
            fail.append(f"{name}: no message with '{want}':\n{text[-1500:]}")
    if fail:
        print("FAIL:\n  " + "\n  ".join(fail))
        return 1
    print("ok")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--finetune", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--case", required=True, choices=["equiv", "kill", "hang", "bad_input"])
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
    return case_fault(args, args.case)


if __name__ == "__main__":
    sys.exit(main())
