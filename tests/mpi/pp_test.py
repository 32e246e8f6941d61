#!/usr/bin/env python3
"""Pipeline-parallel tessera-finetune under mpirun against single-process training.

Reuses dp_test.py's model (a small transformer-style MLP block), data and helpers.

  --case equiv --pp P [--dp D] --schedule gpipe|1f1b [--micro-batches M] [--file-cut]:
      5 steps on a global batch of 10 rows (uneven micro-batches), trained once in one
      process and once with `mpirun -np P*D tessera-finetune --parallel dp=D,pp=P
      --micro-batches M --schedule S`. --file-cut: the model is cut by
      `tessera convert --pipeline-stages P` (the cut it prints must equal the one the
      trainer makes at load from an uncut file). Checks:
        - final weights within 1e-5 (max abs diff) of single-process training, and moved;
          per-step losses within 1e-5;
        - the bytes every rank sent on the pp communicator per step equal the theory
          computed here: per micro-batch of m rows, each value crossing out of the stage
          forward (m x its width x 4 bytes, widths from ONNX shape inference) and each
          float value crossing in, its gradient backward;
        - the peak number of micro-batches whose activations a stage held: GPipe M,
          1F1B min(P - stage, M);
        - the output model runs (`tessera run`), and resumed in ONE process for 2 more steps
          it ends within 1e-5 of the single-process model resumed the same way; so do the
          single-process checkpoint resumed under this layout (cut at load: the same cut as
          `tessera convert --pipeline-stages` prints) and this run's checkpoint resumed at
          another pp (re-cut at load).
  --case kill / hang: rank 1 of a pp=2 run killed (SIGKILL) or stopped (SIGSTOP) mid-run:
      the others exit non-zero within the timeout, naming rank 1 (dp_test's fault cases).
  --case too_small: a 2-node model cut into 5 stages: `tessera convert --pipeline-stages 5`
      (no file, and no "converted" line: the cut is made before the write)
      and `mpirun -np 5 tessera-finetune --parallel pp=5` fail naming why; so do a wrong world
      size, --micro-batches without pp, a bad --schedule and --zero with pp.
Exit 77 (skip) without onnx.
"""
import argparse
import os
import re
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dp_test  # noqa: E402  (exits 77 without onnx)
from dp_test import (check_bad_inputs, chunks, common_args, common_flags, compare_training, finish, mpirun,  # noqa: E402
                     prepare, resume_flags, run, table_row, weights_of)

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper, shape_inference  # noqa: E402


def widths(onnx_path):
    """value name -> elements per row (product of the dims after the batch dim)."""
    m = shape_inference.infer_shapes(onnx.load(onnx_path))
    out = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        dims = vi.type.tensor_type.shape.dim
        out[vi.name] = int(np.prod([d.dim_value for d in dims[1:]])) if len(dims) > 1 else 1
    return out


def parse_cut(text):
    """The 'stage k: ... sends a b' lines: per stage, the values it sends."""
    cut = {}
    for line in text.splitlines():
        m = re.match(r"\s*stage (\d+): nodes (\d+)-(\d+).*?(?:, sends (.*))?$", line)
        if m:
            cut[int(m.group(1))] = (int(m.group(2)), int(m.group(3)), (m.group(4) or "").split())
    return cut


def crossings(onnx_path, cut, stages):
    """stage -> the values it sends to the next stage, computed here from the trained model
    (exported to ONNX, nodes in the .tsr order) and the printed node ranges alone: a value made
    in stage a (a graph input: -1) and read in stage b > a (the model output: read by the
    loss in the last stage) crosses every cut between them."""
    g = onnx.load(onnx_path).graph
    inits = {i.name for i in g.initializer}
    stage_of = []
    for i in range(len(g.node)):
        stage_of += [s for s, (lo, hi, _) in cut.items() if lo <= i <= hi][:1] or [None]
    if None in stage_of:
        raise SystemExit(f"FAIL: the printed cut {cut} does not cover the {len(g.node)} nodes")
    made = {x.name: -1 for x in g.input}
    last = {}
    for i, n in enumerate(g.node):
        for v in n.input:
            if v and v not in inits:
                last[v] = max(last.get(v, -1), stage_of[i])
        for o in n.output:
            made[o] = stage_of[i]
    for o in g.output:
        last[o.name] = stages - 1
    return {s: sorted(v for v in last if made[v] <= s < last[v]) for s in range(stages - 1)}


def case_equiv(args):
    work = args.work_dir
    w0 = prepare(args, 4)
    P, D, M = args.pp, args.dp, args.micro_batches
    model = os.path.join(work, "m.tsr")
    if args.file_cut:
        model = os.path.join(work, "m_cut.tsr")
        r = run([args.tessera, "convert", os.path.join(work, "m.onnx"), "-o", model, "--pipeline-stages", str(P)])
        print(r.stdout.strip())
        file_cut = parse_cut(r.stdout)
    common = common_flags(args)[2:]  # dp_test's flags without --model m.tsr: this run's model is `model`
    single = os.path.join(work, "single.tsr")
    t0 = time.time()
    run([args.finetune, "--model", os.path.join(work, "m.tsr")] + common + ["--out", single])
    t1 = time.time()
    out = os.path.join(work, "pp.tsr")
    par = f"dp={D},pp={P}" if D > 1 else f"pp={P}"
    r = run(mpirun(args, P * D) + [args.finetune, "--model", model] + common +
            ["--out", out, "--parallel", par, "--micro-batches", str(M), "--schedule", args.schedule], timeout=120)
    t2 = time.time()
    print(r.stdout.strip())
    print("\n".join(l for l in r.stderr.splitlines() if "stage" in l))
    fail = []
    cut = parse_cut(r.stderr)
    if sorted(cut) != list(range(P)):
        fail.append(f"the run did not print a cut into {P} stages:\n{r.stderr[-2000:]}")
    if args.file_cut and file_cut != cut:
        fail.append(f"tessera convert's cut {file_cut} != the one the trainer used {cut}")
    if args.file_cut and "from the file" not in r.stderr:
        fail.append("the trainer did not use the file's stages")
    compared, diff, loss_diff, mp, _ = compare_training(args, w0, single, out, "pipeline")
    fail += compared
    # Theory: rank = stage * D + dp index; this dp rank's rows of the global batch of 10, cut
    # into M micro-batches (empty ones skipped); stage s sends what crosses out of it
    # forward and the gradients of the float values crossing into it backward.
    wd = widths(os.path.join(work, "m.onnx"))
    cross = crossings(out + ".export.onnx", cut, P) if sorted(cut) == list(range(P)) else {}
    for s_, vals in cross.items():
        if sorted(cut[s_][2]) != vals:
            fail.append(f"stage {s_} sends {cut[s_][2]} by the run's print, {vals} by the graph")
    want, peak_want = [], []
    for rank in range(P * D):
        s, d = divmod(rank, D)
        mbs = [m for m in chunks(chunks(10, D)[d], M) if m > 0]
        sends_fwd = cross.get(s, []) if s + 1 < P else []
        recv_fwd = cross.get(s - 1, []) if s > 0 else []
        per_row = sum(wd[v] for v in sends_fwd) + sum(wd[v] for v in recv_fwd)  # every crossing value is float here
        want.append(4 * per_row * sum(mbs))
        peak_want.append(len(mbs) if args.schedule == "gpipe" else min(P - s, len(mbs)))
    for m in mp:
        if m["pp_bytes_per_rank"] != want:
            fail.append(f"step {m['step']}: pp bytes per rank {m['pp_bytes_per_rank']} != theory computed here {want}")
        if m["pp_bytes_theory_per_rank"] != want:
            fail.append(f"step {m['step']}: the run's theory {m['pp_bytes_theory_per_rank']} != {want}")
        if m["peak_micro_batches_per_rank"] != peak_want:
            fail.append(f"step {m['step']}: peak micro-batches held {m['peak_micro_batches_per_rank']} != {peak_want} ({args.schedule})")
        if D > 1:
            g = 4 * sum(v.size for v in w0.values())  # the dp all-reduce moves each stage's gradients
            if any(b <= 0 for b in m["dp_bytes_per_rank"]) or sum(m["dp_bytes_per_rank"]) > 2 * g:
                fail.append(f"step {m['step']}: dp all-reduce bytes {m['dp_bytes_per_rank']} (gradients {g} bytes in all)")
    if "peak" not in r.stdout:
        fail.append("the run did not print the peak micro-batches held")
    # The output model runs, and continues in one process like the single-process one.
    rr = run([args.tessera, "run", out, "--random", "--shape", "x=3x8"], check=False)
    if rr.returncode != 0:
        fail.append(f"tessera run on the output failed: {rr.stderr[-500:]}")
    more = resume_flags(args, common, 7)
    rs, rp = os.path.join(work, "single_more.tsr"), os.path.join(work, "pp_more.tsr")
    run([args.finetune, "--resume", single] + more + ["--out", rs])
    run([args.finetune, "--resume", out] + more + ["--out", rp])
    # ... and the single-process checkpoint continues under this pipeline layout.
    rq = os.path.join(work, "single_more_pp.tsr")
    rl = run(mpirun(args, P * D) + [args.finetune, "--resume", single] + more +
             ["--out", rq, "--parallel", par, "--micro-batches", str(M), "--schedule", args.schedule], timeout=120)
    if "(cut at load)" not in rl.stderr:
        fail.append("the uncut single-process checkpoint was not cut at load")
    if args.file_cut and parse_cut(rl.stderr) != file_cut:
        fail.append(f"tessera convert --pipeline-stages cut {file_cut}, the trainer cut at load {parse_cut(rl.stderr)}")
    # ... and this run's checkpoint (cut into P stages) continues under another pipeline layout.
    P2 = 3 if P == 2 else 2
    ro = os.path.join(work, "pp_more_other.tsr")
    r2 = run(mpirun(args, P2) + [args.finetune, "--resume", out] + more +
             ["--out", ro, "--parallel", f"pp={P2}", "--micro-batches", "3", "--schedule", "gpipe"], timeout=120)
    if f"cut into {P} pipeline stages; cutting it into {P2} at load" not in r2.stderr:
        fail.append(f"resuming a pp={P} checkpoint at pp={P2} did not say it re-cut the model:\n{r2.stderr[-1000:]}")
    wrs, wro = weights_of(args, rs), weights_of(args, ro)
    other_diff = max(float(np.abs(wrs[k] - wro[k]).max()) for k in w0)
    if other_diff > 1e-5:
        fail.append(f"the pipeline checkpoint resumed at pp={P2} ends {other_diff:.3g} away from the single one resumed")
    wrp, wrq = weights_of(args, rp), weights_of(args, rq)
    resume_diff = max(float(np.abs(wrs[k] - wrp[k]).max()) for k in w0)
    if resume_diff > 1e-5:
        fail.append(f"resumed in one process, the pipeline checkpoint ends {resume_diff:.3g} away from the single one")
    resume_pp_diff = max(float(np.abs(wrs[k] - wrq[k]).max()) for k in w0)
    if resume_pp_diff > 1e-5:
        fail.append(f"the single-process checkpoint resumed under {par} ends {resume_pp_diff:.3g} away from resuming it in one process")
    resume_diff = max(resume_diff, resume_pp_diff, other_diff)
    measured = mp[-1]["pp_bytes_per_rank"] if mp else []
    peaks = mp[-1]["peak_micro_batches_per_rank"] if mp else []
    table_row(f"pp={P}{f',dp={D}' if D > 1 else ''}", args.schedule, args.optimizer, M, len(mp), f"{diff:.2g}", f"{loss_diff:.2g}",
              measured, want, peaks, f"{resume_diff:.2g}", f"{t1 - t0:.2f} s / {t2 - t1:.2f} s")
    return finish(fail, f"ok: {par} {args.schedule} matches single-process training: max weight diff {diff:.3g}, "
                  f"loss diff {loss_diff:.3g}; pp bytes per rank per step {measured} (theory {want}); peak micro-batches held {peaks}")


def case_too_small(args):
    work = args.work_dir
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(3)
    n = helper.make_node
    g = helper.make_graph([n("MatMul", ["x", "w"], ["h"], name="fc"), n("Add", ["h", "b"], ["out"], name="fc_bias")], "tiny",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", 4])],
                          [numpy_helper.from_array(rng.normal(0, 0.3, (8, 4)).astype(np.float32), "w"),
                           numpy_helper.from_array(rng.normal(0, 0.1, 4).astype(np.float32), "b")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(work, "tiny.onnx"))
    tiny = os.path.join(work, "tiny.tsr")
    run([args.tessera, "convert", os.path.join(work, "tiny.onnx"), "-o", tiny])
    x = rng.normal(0, 1, (20, 8)).astype(np.float32)
    np.savez(os.path.join(work, "train.npz"), x=x, y=rng.integers(0, 4, 20).astype(np.int64))
    np.savez(os.path.join(work, "val.npz"), x=x[:5], y=rng.integers(0, 4, 5).astype(np.int64))
    want = "cannot be cut into 5 stages (2 nodes, 2 of them the first to read a parameter"
    ft = [args.finetune, "--model", tiny, "--train", os.path.join(work, "train.npz"), "--val", os.path.join(work, "val.npz"),
          "--quiet", "--out", os.path.join(work, "o.tsr"), "--comm-timeout", "10"]
    cases = [("convert", [args.tessera, "convert", os.path.join(work, "tiny.onnx"), "-o", os.path.join(work, "t5.tsr"),
                          "--pipeline-stages", "5"], want),
             ("finetune", mpirun(args, 5) + ft + ["--parallel", "pp=5"], want),
             ("world size", mpirun(args, 3) + ft + ["--parallel", "pp=2"], "--parallel pp=2 but the job has 3 ranks"),
             ("micro-batches without pp", ft + ["--micro-batches", "4"], "--micro-batches and --schedule are for pipeline parallelism"),
             ("schedule", ft + ["--parallel", "pp=2", "--schedule", "zb"], "--schedule"),
             ("zero with pp", ft + ["--parallel", "pp=2", "--zero", "1"], "ZeRO with pipeline stages is not implemented")]
    fail = check_bad_inputs(cases)
    if os.path.exists(os.path.join(work, "t5.tsr")):
        fail.append("convert left a file behind")
    r = run(cases[0][1], check=False)
    if "converted" in r.stdout:  # the cut is made before the file is written, and fails first
        fail.append(f"convert printed 'converted' before failing:\n{r.stdout}")
    return finish(fail)


def main():
    ap = argparse.ArgumentParser()
    common_args(ap, ["equiv", "kill", "hang", "too_small"])
    ap.add_argument("--pp", type=int, default=2)
    ap.add_argument("--dp", type=int, default=1)
    ap.add_argument("--micro-batches", type=int, default=4)
    ap.add_argument("--schedule", default="1f1b", choices=["gpipe", "1f1b"])
    ap.add_argument("--file-cut", action="store_true")
    ap.add_argument("--optimizer", default="sgd", choices=["sgd", "adamw"])
    args = ap.parse_args()
    if args.case == "equiv":
        return case_equiv(args)
    if args.case == "too_small":
        return case_too_small(args)
    args.np = args.pp * args.dp
    args.parallel = f"pp={args.pp}" if args.dp == 1 else f"dp={args.dp},pp={args.pp}"
    args.fault_extra = ["--micro-batches", str(args.micro_batches), "--schedule", args.schedule]
    return dp_test.case_fault(args, args.case)


if __name__ == "__main__":
    sys.exit(main())
