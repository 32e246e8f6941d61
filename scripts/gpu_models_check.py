#!/usr/bin/env python3
"""The four real models on Tessera's CUDA backend against its CPU backend.

    gpu_models_check.py --tessera BIN --models-dir DIR [--inputs-dir DIR] --work DIR

For det, rec, cls and vad (scripts/demo/real_models.py): converts the .onnx in --models-dir,
runs `tessera run --backend cuda --verbose` and `tessera run --backend cpu` on the same input
(the real inputs of scripts/demo/prepare_inputs.py from --inputs-dir/<model>/*.npy when
present, else seeded random inputs of the same shapes), and prints per output the relative
error ||cuda - cpu||_2 / ||cpu||_2 (goal <= 1e-4 with TF32 off), the max abs difference, how
many nodes ran on CUDA, and the CUDA run time. Exit status 0 when every model is within 1e-4.
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "demo"))
from real_models import MODELS, ORDER  # noqa: E402

GOAL = 1e-4
# Shapes of the real inputs (see scripts/demo/prepare_inputs.py), for random stand-ins.
FALLBACK = {
    "det": {"x": ((1, 3, 736, 1088), np.float32)},
    "rec": {"x": ((1, 3, 48, 448), np.float32)},
    "cls": {"x": ((1, 3, 48, 192), np.float32)},
    "vad": {"input": ((31, 576), np.float32), "state": ((2, 31, 128), np.float32), "sr": ((), np.int64)},
}


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def inputs_for(model, inputs_dir, work):
    d = os.path.join(inputs_dir, model) if inputs_dir else ""
    args = []
    real = True
    for name, (shape, dt) in FALLBACK[model].items():
        p = os.path.join(d, sanitize(name) + ".npy") if d else ""
        if not (p and os.path.isfile(p)):
            real = False
            rng = np.random.default_rng(11)
            if dt == np.int64:
                a = np.array(16000, np.int64)
            elif name == "state":
                a = np.zeros(shape, np.float32)
            else:
                a = rng.uniform(-1, 1, shape).astype(np.float32)
            p = os.path.join(work, f"{model}_{sanitize(name)}.npy")
            np.save(p, a)
        args += ["--input", f"{name}={p}"]
    return args, real


def run(cmd, timeout):
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--inputs-dir", default=None)
    ap.add_argument("--work", required=True)
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rows, ok_all = [], True
    for m in ORDER:
        onnx_path = os.path.join(args.models_dir, MODELS[m][0])
        if not os.path.isfile(onnx_path):
            print(f"[models] {m}: {onnx_path} missing, skipped")
            ok_all = False
            continue
        tsr = os.path.join(args.work, m + ".tsr")
        rc, out, _ = run([args.tessera, "convert", onnx_path, "-o", tsr], args.timeout)
        if rc != 0:
            print(f"[models] {m}: convert failed: {out.strip()[-400:]}")
            ok_all = False
            continue
        in_args, real = inputs_for(m, args.inputs_dir, args.work)
        res = {}
        for b in ("cpu", "cuda"):
            odir = os.path.join(args.work, f"{m}_{b}")
            cmd = [args.tessera, "run", tsr, "--backend", b, "-o", odir] + in_args + (["--verbose"] if b == "cuda" else [])
            try:
                rc, out, secs = run(cmd, args.timeout)
            except subprocess.TimeoutExpired:
                rc, out, secs = -1, "timeout", args.timeout
            res[b] = (rc, out, secs, odir)
        if res["cpu"][0] != 0 or res["cuda"][0] != 0:
            for b in ("cpu", "cuda"):
                if res[b][0] != 0:
                    print(f"[models] {m}: {b} run failed: {res[b][1].strip()[-600:]}")
            ok_all = False
            continue
        out = res["cuda"][1]
        placed = [l for l in out.splitlines() if " -> " in l and "copy '" not in l and "executor" not in l]
        on_cuda = sum("-> cuda" in l for l in placed)
        fell_back = sorted({l.strip().split(" ")[0] for l in placed if "-> cpu" in l})
        copies = sum("copy '" in l for l in out.splitlines())
        worst, worst_abs = 0.0, 0.0
        for f in sorted(os.listdir(res["cpu"][3])):
            a = np.load(os.path.join(res["cuda"][3], f)).astype(np.float64)
            b = np.load(os.path.join(res["cpu"][3], f)).astype(np.float64)
            if a.shape != b.shape:
                worst = float("inf")
                print(f"[models] {m}: output {f}: shape {a.shape} != cpu {b.shape}")
                continue
            rel = float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))
            worst = max(worst, rel)
            worst_abs = max(worst_abs, float(np.max(np.abs(a - b))) if a.size else 0.0)
        ok = worst <= GOAL
        ok_all &= ok
        rows.append((m, "real" if real else "random", worst, worst_abs, f"{on_cuda}/{len(placed)}", copies,
                     ", ".join(fell_back) or "-", res["cuda"][2], res["cpu"][2], "pass" if ok else "FAIL"))
    print("| model | input | rel error (worst output) | max abs diff | nodes on CUDA | copies | ops on the CPU "
          "| CUDA run s (incl. load, plan) | CPU run s | <= 1e-4 |")
    print("| --- | --- | ---: | ---: | --- | ---: | --- | ---: | ---: | --- |")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.2e} | {r[3]:.2e} | {r[4]} | {r[5]} | {r[6]} | {r[7]:.2f} | {r[8]:.2f} | {r[9]} |")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
