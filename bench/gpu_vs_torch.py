#!/usr/bin/env python3
"""Tessera's CUDA backend against PyTorch eager on the same GPU, same weights, same input.

    gpu_vs_torch.py --tessera BIN --work DIR [--models resnet50 bert] [--batches 1 32]
                    [--runs 20] [--warmup 3] [--md-out FILE]

For each model of bench/models/build_models.py (ResNet-50, the BERT-base-sized encoder) the
ONNX file is built once with a symbolic batch dim (for BERT the two Reshape targets get 0 in
the batch position, which ONNX Reshape copies from the input), converted with `tessera
convert`, and for each batch size:
- Tessera: `tessera bench --backend cuda` (median of --runs after --warmup; each run takes
  the input from host memory and returns the output to host memory, as Session::run does);
- PyTorch: the same ONNX graph executed op by op with torch functional ops on the GPU (the
  weights are the ONNX initializers, moved to the GPU once), i.e. PyTorch eager; timed
  twice: with the input already on the GPU and the output left there ("device-resident"),
  and host in / host out like Tessera (input copied up, output copied down each run);
  medians over --runs after --warmup, with torch.cuda.synchronize() around each run.
TF32 is off on both sides (torch.backends.cuda.matmul.allow_tf32 = False,
torch.backends.cudnn.allow_tf32 = False; Tessera's default). The outputs of the two are
compared (relative L2 error) on the benchmark input. Prints one Markdown table.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "models"))
import build_models  # noqa: E402


def batch_dynamic(model, name):
    """The model with dim 0 of its input and output symbolic ('batch')."""
    g = model.graph
    for vi in list(g.input) + list(g.output):
        d = vi.type.tensor_type.shape.dim[0]
        d.ClearField("dim_value")
        d.dim_param = "batch"
    if name == "bert":
        for init in g.initializer:
            if init.name.startswith("shape_"):
                a = numpy_helper.to_array(init).copy()
                a[0] = 0  # Reshape: 0 copies the input's dim (allowzero = 0)
                init.CopyFrom(numpy_helper.from_array(a, init.name))
    return model


def torch_runner(model, device):
    """A callable x -> y running the ONNX graph with torch functional ops (eager)."""
    import torch
    import torch.nn.functional as F
    g = model.graph
    w = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()).to(device) for i in g.initializer}
    shapes = {k: [int(v) for v in t.cpu().reshape(-1).tolist()] for k, t in w.items() if t.dtype == torch.int64}

    def attrs(n):
        return {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}

    def run(x):
        env = dict(w)
        env[g.input[0].name] = x
        for n in g.node:
            a = attrs(n)
            i = [env[k] for k in n.input]
            op = n.op_type
            if op == "Conv":
                p = a.get("pads", [0, 0, 0, 0])
                y = F.conv2d(i[0], i[1], i[2] if len(i) > 2 else None, stride=a.get("strides", 1),
                             padding=(p[0], p[1]), dilation=a.get("dilations", 1), groups=a.get("group", 1))
            elif op == "BatchNormalization":
                y = F.batch_norm(i[0], i[3], i[4], i[1], i[2], training=False, eps=a.get("epsilon", 1e-5))
            elif op == "Relu":
                y = F.relu(i[0])
            elif op == "MaxPool":
                p = a.get("pads", [0, 0, 0, 0])
                y = F.max_pool2d(i[0], a["kernel_shape"], a.get("strides", 1), padding=(p[0], p[1]))
            elif op == "Add":
                y = i[0] + i[1]
            elif op == "Mul":
                y = i[0] * i[1]
            elif op == "GlobalAveragePool":
                y = i[0].mean(dim=(2, 3), keepdim=True)
            elif op == "Flatten":
                y = torch.flatten(i[0], a.get("axis", 1))
            elif op == "Gemm":
                y = F.linear(i[0], i[1] if a.get("transB", 0) else i[1].t(), i[2] if len(i) > 2 else None)
            elif op == "Identity":
                y = i[0]
            elif op == "Clip":
                y = torch.clamp(i[0], float(i[1]), float(i[2]))
            elif op == "MatMul":
                y = torch.matmul(i[0], i[1])
            elif op == "Reshape":
                s = [i[0].shape[k] if v == 0 else v for k, v in enumerate(shapes[n.input[1]])]
                y = i[0].reshape(s)
            elif op == "Transpose":
                y = i[0].permute(*a["perm"])
            elif op == "Softmax":
                y = torch.softmax(i[0], dim=a.get("axis", -1))
            elif op == "LayerNormalization":
                y = F.layer_norm(i[0], i[0].shape[-1:], i[1], i[2], a.get("epsilon", 1e-5))
            elif op == "Erf":
                y = torch.erf(i[0])
            else:
                raise RuntimeError(f"torch runner: op {op} not handled")
            env[n.output[0]] = y
        return env[g.output[0].name]
    return run


def median_ms(fn, runs, warmup, sync):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def rel_err(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--models", nargs="+", default=["resnet50", "bert"])
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 32])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--md-out", default=None)
    args = ap.parse_args()

    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return 77
    dev = torch.device("cuda")
    gpu = torch.cuda.get_device_name(0)
    os.makedirs(args.work, exist_ok=True)
    rows = []
    for name in args.models:
        t0 = time.time()
        model = batch_dynamic(build_models.build_model(name), name)
        path = os.path.join(args.work, f"{name}.onnx")
        onnx.save_model(model, path)
        tsr = os.path.join(args.work, f"{name}.tsr")
        subprocess.run([args.tessera, "convert", path, "-o", tsr], check=True, stdout=subprocess.DEVNULL)
        print(f"[gpu_vs_torch] {name}: built and converted in {time.time() - t0:.1f} s", flush=True)
        run_torch = torch_runner(model, dev)
        in_name = model.graph.input[0].name
        for b in args.batches:
            shape = (b,) + tuple(build_models.INPUT_SHAPES[name][in_name][1:])
            x = np.random.default_rng(7 + b).standard_normal(shape, dtype=np.float32)
            xf = os.path.join(args.work, f"{name}_b{b}.npy")
            np.save(xf, x)
            row = {"model": name, "batch": b}
            try:
                out = subprocess.run([args.tessera, "bench", tsr, "--backend", "cuda", "--input", f"{in_name}={xf}",
                                      "--runs", str(args.runs), "--warmup", str(args.warmup), "--json"],
                                     check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
                row["tessera_ms"] = json.loads(out.strip().splitlines()[-1])["median_ms"]
                odir = os.path.join(args.work, f"{name}_b{b}_out")
                v = subprocess.run([args.tessera, "run", tsr, "--backend", "cuda", "--verbose", "--input", f"{in_name}={xf}",
                                    "-o", odir], check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
                placed = [l for l in v.splitlines() if " -> " in l and "copy '" not in l]
                row["on_cuda"] = f"{sum('-> cuda' in l for l in placed)}/{len(placed)}"
                y_tsr = np.load(os.path.join(odir, build_models.OUTPUT_NAMES[name] + ".npy"))
            except (subprocess.CalledProcessError, KeyError, ValueError, IndexError) as e:
                msg = getattr(e, "stdout", None) or str(e)
                print(f"[gpu_vs_torch] {name} batch {b}: Tessera failed: {msg.strip().splitlines()[-1] if msg.strip() else e}")
                row["tessera_ms"], row["on_cuda"], y_tsr = float("nan"), "-", None
            with torch.no_grad():
                xd = torch.from_numpy(x).to(dev)
                row["torch_dev_ms"] = median_ms(lambda: run_torch(xd), args.runs, args.warmup, torch.cuda.synchronize)
                row["torch_host_ms"] = median_ms(lambda: run_torch(torch.from_numpy(x).to(dev)).cpu(), args.runs, args.warmup,
                                                 torch.cuda.synchronize)
                y_torch = run_torch(xd).cpu().numpy()
            row["rel_err"] = rel_err(y_tsr, y_torch) if y_tsr is not None else float("nan")
            rows.append(row)
            print(f"[gpu_vs_torch] {row}", flush=True)
    lines = [f"GPU: {gpu}; torch {torch.__version__}; TF32 off; median of {args.runs} runs after {args.warmup} warm-up", "",
             "| model | batch | Tessera CUDA ms (host in/out) | PyTorch eager ms (host in/out) | PyTorch eager ms (device-resident) "
             "| Tessera / PyTorch (host in/out) | nodes on CUDA | rel error vs PyTorch |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for r in rows:
        ratio = r["tessera_ms"] / r["torch_host_ms"] if r["torch_host_ms"] > 0 else float("nan")
        lines.append(f"| {r['model']} | {r['batch']} | {r['tessera_ms']:.2f} | {r['torch_host_ms']:.2f} | {r['torch_dev_ms']:.2f} "
                     f"| {ratio:.2f} | {r['on_cuda']} | {r['rel_err']:.2e} |")
    table = "\n".join(lines)
    print(table)
    if args.md_out:
        with open(args.md_out, "w") as f:
            f.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
