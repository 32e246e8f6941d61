#!/usr/bin/env python3
"""Tensor-parallel tessera-finetune under mpirun against single-process training.

The model is dp_test.py's transformer-style block with an MLP pair (build_model ffn=32:
LayerNorm -> fc2 [16, 32] + b2 -> Gelu -> fc_out [32, 16] + b_out -> residual -> head),
converted with `tessera convert --shard tp=N` (fc2 column parallel, fc_out row parallel).

  --case equiv --tp T [--dp D] [--optimizer sgd|adamw]: 5 steps on a global batch of 10
      rows, once in one process and once with `mpirun -np D*T tessera-finetune --parallel
      dp=D,tp=T`. Checks:
        - the --shard report names the pair (fc2 column parallel, fc_out row parallel);
        - the final weights (gathered from the tensor ranks into a normal .tsr) agree within
          1e-5 (max abs diff) and moved (> 1e-3); the per-step losses agree within 1e-5;
          the checkpoint holds the full weights too;
        - every rank's tp communicator sent, per step, the theory computed here: per
          column/row pair, an all-reduce of the pair's output activation in the forward
          pass (Megatron's g) and of its input's gradient in the backward pass (f), each of
          E = rows x hidden float32 elements with rows the rank's data-parallel slice of the
          batch: ring volume 4 (2E - c_q - c_(q+1)) with c the ring chunks of E over T and
          q the tp index, = 2(T-1)/T x 4E when T divides E; and the theory the run prints
          (2(T-1)/T x the bytes its all-reduce nodes reduced) is that formula;
        - the output model runs with `tessera run` and matches the single-process model's
          output (1e-4);
        - both final models resumed in ONE process for 2 more steps, and the tensor-parallel
          one again under the same mesh, end within 1e-5.
  --gemm: the MLP pair as Gemm(A, W^T, bias, transB=1) (torch's nn.Linear export): the
      weights are split on the other dims, the row-parallel Gemm's C is added after the
      all-reduce.
  --model attention: build_attention_model (self-attention with 4 heads, then the MLP
      pair): Q/K/V column parallel, the output projection row parallel, heads split over
      ranks; two blocks, so twice the all-reduce volume, of rows x SEQ x HIDDEN elements.
  --model embedding: the attention model with a vocab-parallel embedding table [10, 16] in
      front (ids as floats, Cast to int64): one more all-reduce per step (its forward output).
  --case kill|hang: dp_test.py's fault case on the annotated MLP model under --parallel
      dp=D,tp=T: rank 1 (a tensor rank) killed or stopped after step 2; the others must exit
      non-zero within the comm timeout (hang: naming rank 1).
  --case bad_input: `--shard tp=3` (32 % 3 != 0) fails naming the node and the size;
      `--shard tp=8` on the attention model (16 = 4 heads x 4) fails naming the Reshape;
      `--shard tp=4` on the embedding model (a 10-row table) fails naming the Gather;
      `--parallel tp=2` on a model converted without --shard fails saying to convert with
      --shard tp=2; `--parallel tp=4` on a model annotated for tp=2 says so; `--parallel tp=2` without mpirun names the -np to use.
Prints a table row for the README. Exit 77 (skip) without onnx.
"""
import argparse
import functools
import os
import sys
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_test import (build_model, case_fault, check_bad_inputs, chunks, common_args, common_flags,  # noqa: E402  (exits 77 without onnx)
                     compare_training, finish, mpirun, prepare, read_metrics, resume_flags, run, table_row, weights_of)

FFN, HIDDEN, BATCH, STEPS = 32, 16, 10, 5
SEQ, HEADS, D_IN, VOCAB = 4, 4, 8, 10


def build_attention_model(rng, classes=4, ffn=FFN, vocab=0):
    """x [N, SEQ, D_IN] -> fc_in + b_in -> LayerNorm -> self-attention (HEADS heads of
    HIDDEN/HEADS: Q, K, V MatMul + bias, Reshape [0, 0, HEADS, hd], Transpose, Q K^T / sqrt(hd),
    Softmax, P V, Transpose, Reshape [0, 0, HIDDEN], output projection + bias) -> residual ->
    MLP (fc2 [HIDDEN, ffn] + b2, Relu, fc_out + b_out) -> residual -> mean over SEQ -> head.
    vocab > 0: the input is x [N, SEQ] of token ids held as floats (tessera-finetune feeds
    float32), Cast to int64 and looked up in an embedding table [vocab, HIDDEN] instead of fc_in."""
    hd = HIDDEN // HEADS
    shapes = {"w_in": (D_IN, HIDDEN), "b_in": (HIDDEN,), "ln_scale": (HIDDEN,), "ln_bias": (HIDDEN,),
              "wq": (HIDDEN, HIDDEN), "bq": (HIDDEN,), "wk": (HIDDEN, HIDDEN), "bk": (HIDDEN,), "wv": (HIDDEN, HIDDEN),
              "bv": (HIDDEN,), "wo": (HIDDEN, HIDDEN), "bo": (HIDDEN,), "w2": (HIDDEN, ffn), "b2": (ffn,),
              "w_out": (ffn, HIDDEN), "b_out": (HIDDEN,), "w3": (HIDDEN, classes), "b3": (classes,)}
    if vocab:
        shapes = {"emb" if k == "w_in" else k: ((vocab, HIDDEN) if k == "w_in" else s) for k, s in shapes.items() if k != "b_in"}
    w = {k: (rng.normal(0, 0.4 if len(s) == 2 else 0.1, s) + (1 if k == "ln_scale" else 0)).astype(np.float32)
         for k, s in shapes.items()}
    consts = {"heads_shape": np.array([0, 0, HEADS, hd], np.int64), "merge_shape": np.array([0, 0, HIDDEN], np.int64),
              "scale": np.array(1 / np.sqrt(hd), np.float32)}
    n = helper.make_node
    if vocab:
        nodes = [n("Cast", ["x"], ["ids"], name="ids", to=TensorProto.INT64), n("Gather", ["emb", "ids"], ["h"], name="embedding")]
    else:
        nodes = [n("MatMul", ["x", "w_in"], ["h0"], name="fc_in"), n("Add", ["h0", "b_in"], ["h"], name="fc_in_bias")]
    nodes += [n("LayerNormalization", ["h", "ln_scale", "ln_bias"], ["a"], name="ln", axis=-1, epsilon=1e-5)]
    for p in "qkv":
        nodes += [n("MatMul", ["a", "w" + p], [p + "0"], name=p + "_proj"), n("Add", [p + "0", "b" + p], [p], name=p + "_bias"),
                  n("Reshape", [p, "heads_shape"], [p + "r"], name=p + "_heads"),
                  n("Transpose", [p + "r"], [p + "t"], name=p + "_transpose", perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3])]
    nodes += [n("MatMul", ["qt", "kt"], ["s0"], name="scores"), n("Mul", ["s0", "scale"], ["s"], name="scale"),
              n("Softmax", ["s"], ["pr"], name="softmax", axis=-1), n("MatMul", ["pr", "vt"], ["c0"], name="context"),
              n("Transpose", ["c0"], ["c1"], name="context_transpose", perm=[0, 2, 1, 3]),
              n("Reshape", ["c1", "merge_shape"], ["c"], name="merge_heads"),
              n("MatMul", ["c", "wo"], ["o0"], name="o_proj"), n("Add", ["o0", "bo"], ["o"], name="o_bias"),
              n("Add", ["o", "h"], ["r1"], name="residual1"),
              n("MatMul", ["r1", "w2"], ["f0"], name="fc2"), n("Add", ["f0", "b2"], ["f1"], name="fc2_bias"),
              n("Relu", ["f1"], ["f2"], name="relu"), n("MatMul", ["f2", "w_out"], ["f3"], name="fc_out"),
              n("Add", ["f3", "b_out"], ["f"], name="fc_out_bias"), n("Add", ["f", "r1"], ["r2"], name="residual2"),
              n("ReduceMean", ["r2"], ["pooled"], name="pool", axes=[1], keepdims=0),
              n("MatMul", ["pooled", "w3"], ["h3"], name="head"), n("Add", ["h3", "b3"], ["out"], name="head_bias")]
    inits = [numpy_helper.from_array(v, k) for k, v in list(w.items()) + list(consts.items())]
    x_shape = ["N", SEQ] if vocab else ["N", SEQ, D_IN]
    g = helper.make_graph(nodes, "attention_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", classes])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), w


def to_gemm(model, w, names=("fc2", "fc_out")):
    """The MatMul + bias Add pairs named `names` as Gemm(A, W^T, bias, transB=1), the form
    torch.onnx exports nn.Linear in (W stored [out, in]); w (the initial weights) follows."""
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    nodes, out, skip = list(g.node), [], set()
    for i, m in enumerate(nodes):
        if m.name in skip:
            continue
        if m.op_type == "MatMul" and m.name in names:
            add = nodes[i + 1]  # the bias Add right after
            wname, bname = m.input[1], add.input[1]
            w[wname] = np.ascontiguousarray(w[wname].T)
            inits[wname].CopyFrom(numpy_helper.from_array(w[wname], wname))
            out.append(helper.make_node("Gemm", [m.input[0], wname, bname], [add.output[0]], name=m.name, transB=1))
            skip.add(add.name)
        else:
            out.append(m)
    del g.node[:]
    g.node.extend(out)
    return model, w


def block_theory(rows, tp, q, blocks, per_row, embeddings=0):
    """Bytes rank q of the tp group sends per step: per block two ring all-reduces of
    rows x per_row float32 elements (forward output, backward input gradient); per
    vocab-parallel embedding one (its forward output; the ids have no gradient)."""
    e = rows * per_row
    c = chunks(e, tp)
    one = 4 * (2 * e - c[q] - c[(q + 1) % tp])
    n = 2 * blocks + embeddings
    return n * one, n * (2 * (tp - 1) / tp * 4 * e)


def case_equiv(args):
    work = args.work_dir
    tp, dp = args.tp, args.dp
    if os.path.exists(os.path.join(work, "m.tsr")):
        os.remove(os.path.join(work, "m.tsr"))
    fail = []
    attention = args.model in ("attention", "embedding")
    embeddings = 1 if args.model == "embedding" else 0
    if embeddings:
        w0 = prepare(args, 4, ffn=args.ffn, convert_extra=["--shard", f"tp={tp}"],
                     build=functools.partial(build_attention_model, vocab=VOCAB), x_dims=(SEQ,))
        for part in ("train", "val"):  # token ids, held as floats
            path = os.path.join(work, part + ".npz")
            d = dict(np.load(path))
            d["x"] = (np.floor(np.abs(d["x"]) * 4) % VOCAB).astype(np.float32)
            np.savez(path, **d)
        blocks, per_row = 2, SEQ * HIDDEN
        want_report = ["2 column/row parallel pair(s) annotated (1 MLP, 1 attention), 1 vocab-parallel embedding(s)",
                       "emb [10,16]: S(0)  (vocab-parallel embedding Gather node 'embedding')", "MatMul node 'o_proj'"]
    elif attention:
        w0 = prepare(args, 4, ffn=args.ffn, convert_extra=["--shard", f"tp={tp}"], build=build_attention_model, x_dims=(SEQ, D_IN))
        blocks, per_row = 2, SEQ * HIDDEN
        want_report = ["2 column/row parallel pair(s) annotated (1 MLP, 1 attention)", "MatMul node 'q_proj'", "MatMul node 'k_proj'",
                       "MatMul node 'v_proj'", "MatMul node 'o_proj'", "MatMul node 'fc2'", "MatMul node 'fc_out'"]
    else:
        build = (lambda rng, classes, ffn: to_gemm(*build_model(rng, classes=classes, ffn=ffn))) if args.gemm else None
        w0 = prepare(args, 4, ffn=args.ffn, convert_extra=["--shard", f"tp={tp}"], build=build)
        blocks, per_row = 1, HIDDEN
        op = "Gemm" if args.gemm else "MatMul"
        want_report = ["1 column/row parallel pair(s) annotated (1 MLP, 0 attention)", f"{op} node 'fc2'", f"{op} node 'fc_out'"]
    report = run([args.tessera, "convert", os.path.join(work, "m.onnx"), "-o", os.path.join(work, "m_check.tsr"),
                  "--shard", f"tp={tp}"]).stdout
    if any(s not in report for s in want_report):
        fail.append(f"the --shard report does not name {want_report}:\n{report}")
    common = common_flags(args, steps=STEPS, clip_norm="1")  # batches of BATCH = 10
    if args.optimizer != "sgd":
        if attention:
            # The key bias's gradient is zero in exact arithmetic (softmax is invariant to a
            # shift along the keys, q.bk is one): what remains is rounding noise, which Adam
            # normalizes to steps of about lr in either process alike; the comparison would
            # measure noise. Frozen.
            common += ["--freeze", "^bk$"]
    single, par = os.path.join(work, "single.tsr"), os.path.join(work, "tp.tsr")
    t0 = time.time()
    run([args.finetune] + common + ["--out", single])
    t1 = time.time()
    r = run(mpirun(args, dp * tp) + [args.finetune] + common + ["--out", par, "--parallel", f"dp={dp},tp={tp}"], timeout=120)
    t2 = time.time()
    print(r.stdout.strip())
    compared, diff, loss_diff, mt, wt = compare_training(args, w0, single, par, "tensor parallel", steps=STEPS)
    wc = weights_of(args, os.path.join(work, "tp.ckpt.tsr"))
    for k in w0:
        if wt[k].shape != w0[k].shape or wc[k].shape != w0[k].shape:
            fail.append(f"'{k}': output {wt[k].shape} / checkpoint {wc[k].shape}, expected the full {w0[k].shape}")
    fail += compared
    ckpt_diff = max(float(np.abs(wc[k] - wt[k]).max()) for k in w0)
    if ckpt_diff > 0:
        fail.append(f"the checkpoint differs from the output model by {ckpt_diff:.3g}")
    # Validation (loss and accuracy) as in one process: each dp rank's tensor ranks count its
    # rows once (a tp rank past the first used to add accuracy -1, one row fewer right).
    vs = [(m["val_loss"], m["val_accuracy"]) for m in read_metrics(single + ".metrics.jsonl") if "val_loss" in m]
    vt = [(m["val_loss"], m["val_accuracy"]) for m in read_metrics(par + ".metrics.jsonl") if "val_loss" in m]
    if not vs or len(vs) != len(vt) or any(abs(a[0] - b[0]) > 1e-5 or a[1] != b[1] for a, b in zip(vs, vt)):
        fail.append(f"validation (loss, accuracy) differs: single {vs} vs tensor parallel {vt}")
    # Communication of the tp communicators, per world rank = dp_index * tp + tp_index.
    want, formula = [], []
    for rank in range(dp * tp):
        d, q = divmod(rank, tp)
        rows = chunks(BATCH, dp)[d]
        exact, f = block_theory(rows, tp, q, blocks, per_row, embeddings)
        want.append(exact)
        formula.append(f)
    measured = mt[-1].get("tp_comm_bytes_per_rank") if mt else None
    for m in mt:
        if m.get("tp") != tp or m.get("dp") != dp:
            fail.append(f"step {m['step']}: the run reports tp={m.get('tp')} dp={m.get('dp')}")
        if m.get("tp_comm_bytes_per_rank") != want:
            fail.append(f"step {m['step']}: tp bytes per rank {m.get('tp_comm_bytes_per_rank')} != ring volume computed here {want}")
        divisible = all((chunks(BATCH, dp)[r // tp] * per_row) % tp == 0 for r in range(dp * tp))
        if abs(m.get("tp_comm_bytes_theory", -1) - formula[0]) > 1e-6 * formula[0]:
            fail.append(f"step {m['step']}: printed theory {m.get('tp_comm_bytes_theory')} != 2(T-1)/T x rank 0's all-reduced "
                        f"activation bytes = {formula[0]}")
        if divisible and m.get("tp_comm_bytes_per_rank") != [int(f) for f in formula]:
            fail.append(f"step {m['step']}: tp bytes {m.get('tp_comm_bytes_per_rank')} != 2 x 2(T-1)/T x activation bytes {formula}")
        if dp > 1 and not attention:
            grad_bytes = 4 * sum(v.size for v in w0.values())
            split = 4 * (w0["w2"].size + w0["b2"].size + w0["w_out"].size)
            local = grad_bytes - split + split // tp  # this rank's gradient bytes (tp divides the split sizes)
            if m["gradient_bytes"] != local:
                fail.append(f"step {m['step']}: dp gradient bytes {m['gradient_bytes']} != {local} (replicated + 1/{tp} of the split)")
    # The output model runs with `tessera run` and gives the single-process model's output.
    x = np.load(os.path.join(work, "val.npz"))["x"][:4]
    np.save(os.path.join(work, "x.npy"), x)
    outs = []
    for name, path in (("single", single), ("tp", par)):
        od = os.path.join(work, "run_" + name)
        run([args.tessera, "run", path, "--input", "x=" + os.path.join(work, "x.npy"), "-o", od])
        outs.append(np.load(os.path.join(od, "out.npy")))
    run_diff = float(np.abs(outs[0] - outs[1]).max())
    if run_diff > 1e-4:
        fail.append(f"tessera run: the tensor-parallel model's output differs by {run_diff:.3g}")
    # Both models resumed in one process for 2 more steps.
    more = resume_flags(args, common, STEPS + 2)
    rs, rt = os.path.join(work, "single_more.tsr"), os.path.join(work, "tp_more.tsr")
    run([args.finetune, "--resume", single] + more + ["--out", rs])
    run([args.finetune, "--resume", par] + more + ["--out", rt])
    # ... and the tensor-parallel checkpoint resumed under the same mesh (its optimizer state
    # sliced again per rank).
    rtt = os.path.join(work, "tp_more_tp.tsr")
    run(mpirun(args, dp * tp) + [args.finetune, "--resume", par] + more + ["--out", rtt, "--parallel", f"dp={dp},tp={tp}"], timeout=120)
    wrs, wrt, wrtt = weights_of(args, rs), weights_of(args, rt), weights_of(args, rtt)
    resume_diff = max(max(float(np.abs(wrs[k] - wrt[k]).max()), float(np.abs(wrs[k] - wrtt[k]).max())) for k in w0)
    if resume_diff > 1e-5:
        fail.append(f"resumed in one process and under dp={dp},tp={tp}, the tensor-parallel checkpoint ends {resume_diff:.3g} "
                    "away from the single one")
    table_row(len(mt), f"{args.model}{' (Gemm)' if args.gemm else ''}", f"dp={dp},tp={tp} ({dp * tp} ranks)", args.optimizer,
              f"{diff:.2g}", f"{loss_diff:.2g}", measured, want, f"{resume_diff:.2g}", f"{t1 - t0:.1f} s / {t2 - t1:.1f} s")
    return finish(fail, f"ok: {args.model}, dp={dp},tp={tp} matches single-process training: max weight diff {diff:.3g}, "
                  f"loss diff {loss_diff:.3g}; tp bytes per rank per step {measured} (theory {want})")


def case_bad_input(args):
    work = args.work_dir
    prepare(args, 4, ffn=FFN)  # m.tsr without annotations
    # The attention model: 16 = 4 heads x 4; tp=8 divides 16 but not the 4 heads.
    att = argparse.Namespace(**vars(args))
    att.work_dir = os.path.join(work, "attention")
    prepare(att, 4, ffn=FFN, build=build_attention_model, x_dims=(SEQ, D_IN))
    # The embedding model: 4 divides 16, 4 heads and 32, not the 10 rows of the table.
    emb = argparse.Namespace(**vars(args))
    emb.work_dir = os.path.join(work, "embedding")
    prepare(emb, 4, ffn=FFN, build=functools.partial(build_attention_model, vocab=VOCAB), x_dims=(SEQ,))

    def shard(model_dir, out, tp):
        return [args.tessera, "convert", os.path.join(model_dir, "m.onnx"), "-o", os.path.join(work, out), "--shard", f"tp={tp}"]

    cases = [("shard tp=3", shard(work, "m3.tsr", 3), ["MatMul node 'fc2'", "has 32 outputs"]),
             ("shard tp=8, attention", shard(att.work_dir, "m8.tsr", 8),
              "Reshape node 'q_heads' splits 16 into 4 heads, which 8 does not divide"),
             ("shard tp=4, embedding", shard(emb.work_dir, "m4.tsr", 4), "Gather node 'embedding' reads an embedding table of 10 rows"),
             ("shard tp=x", shard(work, "mx.tsr", "x"), "--shard 'tp=x'")]

    def ft(extra):
        return [args.finetune, "--model", os.path.join(work, "m.tsr"), "--train", os.path.join(work, "train.npz"),
                "--val", os.path.join(work, "val.npz"), "--epochs", "1", "--batch-size", "10", "--quiet",
                "--out", os.path.join(work, "o.tsr"), "--comm-timeout", "10"] + extra

    run([args.tessera, "convert", os.path.join(work, "m.onnx"), "-o", os.path.join(work, "m_tp2.tsr"), "--shard", "tp=2"])

    def ft2(extra):  # the model annotated for tp=2
        return [c if not c.endswith("m.tsr") else os.path.join(work, "m_tp2.tsr") for c in ft(extra)]

    cases += [("unannotated", mpirun(args, 2) + ft(["--parallel", "tp=2"]), "convert it with `tessera convert MODEL.onnx -o OUT.tsr --shard tp=2`"),
              ("other tp", mpirun(args, 4) + ft2(["--parallel", "tp=4"]), "the model was annotated for tp=2 (mesh 'tp'): convert it with"),
              ("world size", ft(["--parallel", "tp=2"]), "launch with mpirun -np 2"),
              ("zero", ft(["--parallel", "dp=1,tp=2", "--zero", "1"]), "ZeRO is not combined with tensor parallelism"),
              ("replace head", ft(["--parallel", "tp=2", "--replace-head", "3"]), "--replace-head with --parallel tp=2: not with tensor parallelism"),
              ("tp and pp", ft(["--parallel", "tp=2,pp=2"]), "tensor and pipeline parallelism together are not implemented yet")]
    fail = check_bad_inputs(cases)
    if os.path.exists(os.path.join(work, "m3.tsr")):
        fail.append("--shard tp=3 left a file behind")
    return finish(fail)


def main():
    ap = argparse.ArgumentParser()
    common_args(ap, ["equiv", "bad_input", "kill", "hang"])
    ap.add_argument("--tp", type=int, default=2)
    ap.add_argument("--dp", type=int, default=1)
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--model", default="mlp", choices=["mlp", "attention", "embedding"])
    ap.add_argument("--ffn", type=int, default=FFN, help="the MLP pair's hidden size")
    ap.add_argument("--gemm", action="store_true", help="the MLP pair as Gemm(transB=1) with its bias as C")
    args = ap.parse_args()
    if args.case in ("kill", "hang"):  # dp_test's fault case on the annotated model
        args.np, args.parallel = args.dp * args.tp, f"dp={args.dp},tp={args.tp}"
        return case_fault(args, args.case, prepare_kw=dict(ffn=args.ffn, convert_extra=["--shard", f"tp={args.tp}"]))
    return case_equiv(args) if args.case == "equiv" else case_bad_input(args)


if __name__ == "__main__":
    sys.exit(main())
