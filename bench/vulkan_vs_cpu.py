#!/usr/bin/env python3
"""Tessera's Vulkan backend beside its CPU backend, per model, on the same machine.

    vulkan_vs_cpu.py --tessera BIN --work DIR [--models-dir DIR] [--bench-models-dir DIR]
                     [--models det rec cls vad resnet50 mobilenetv2 bert] [--runs 10]
                     [--warmup 2] [--threads N] [--md-out FILE]

For each model: `tessera convert` once, then `tessera bench --json` on the same input with
--backend cpu and with --backend vulkan (nodes the Vulkan backend declines run on the CPU,
with copies); the latency is the median of --runs timed runs after --warmup, in
milliseconds, each run taking its input from host memory and returning its outputs to host
memory (Session::run). Both use --threads N CPU threads (default: all cores) for what runs
on the CPU. The ratio column is vulkan / cpu (below 1: Vulkan is faster).

Models: the four real models of scripts/fetch_models.sh (det, rec, cls, vad; their real
inputs from scripts/demo/prepare_inputs.py; --models-dir, default build/models) and the
three synthetic benchmark models of bench/models/build_models.py (ResNet-50, MobileNetV2,
the BERT-base-sized encoder; built into --bench-models-dir, default WORK/bench_models, when
not there yet). A model whose file is missing is reported and skipped.

The Vulkan device is the one make_backend("vulkan") picks (TESSERA_VULKAN_DEVICE chooses);
on a machine without a GPU that is Mesa's lavapipe, a CPU emulation: its numbers say what
the backend costs there, not what a GPU gives.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts", "demo"))
sys.path.insert(0, os.path.join(HERE, "models"))

REAL = ["det", "rec", "cls", "vad"]
SYNTH = ["resnet50", "mobilenetv2", "bert"]


def run(cmd, timeout):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def real_model(name, models_dir, work):
    """(onnx path, [--input args]) for a real model, or (None, reason)."""
    import numpy as np
    from prepare_inputs import model_inputs, sanitize
    from real_models import MODELS
    path = os.path.join(models_dir, MODELS[name][0])
    if not os.path.isfile(path):
        return None, f"{path} missing (scripts/fetch_models.sh)"
    d = os.path.join(work, "inputs", name)
    os.makedirs(d, exist_ok=True)
    args = []
    for k, v in model_inputs(name).items():
        f = os.path.join(d, sanitize(k) + ".npy")
        np.save(f, v)
        args += ["--input", f"{k}={f}"]
    return path, args


def synth_model(name, bench_dir):
    path = os.path.join(bench_dir, name + ".onnx")
    args_file = os.path.join(bench_dir, "inputs", name, "args.txt")
    if not (os.path.isfile(path) and os.path.isfile(args_file)):
        rc, out = run([sys.executable, os.path.join(HERE, "models", "build_models.py"), bench_dir,
                       "--models", name, "--no-check"], 1800)
        if rc != 0:
            return None, "build_models.py failed: " + out.strip()[-300:]
    with open(args_file) as f:
        return path, [line.strip() for line in f if line.strip()]


def bench(binary, tsr, args, backend, runs, warmup, threads):
    cmd = [binary, "bench", tsr, *args, "--backend", backend, "--runs", str(runs), "--warmup", str(warmup),
           "--threads", str(threads), "--json"]
    rc, out = run(cmd, 3600)
    if rc != 0:
        return None, out.strip()[-300:]
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            return json.loads(line), out
    return None, "no JSON line in: " + out.strip()[-300:]


def placements(binary, tsr, args, work):
    """(nodes on vulkan, nodes on the cpu) from `tessera run --verbose`."""
    rc, out = run([binary, "run", tsr, *args, "--backend", "vulkan", "--verbose", "--output-dir",
                   os.path.join(work, "run_out")], 3600)
    on_vk = sum(1 for l in out.splitlines() if " node " in l and l.rstrip().endswith("-> vulkan"))
    on_cpu = sum(1 for l in out.splitlines() if " node " in l and l.rstrip().endswith("-> cpu"))
    return on_vk, on_cpu, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "build", "models"))
    ap.add_argument("--bench-models-dir", default=None)
    ap.add_argument("--models", nargs="+", default=REAL + SYNTH, choices=REAL + SYNTH)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--md-out", default=None)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    bench_dir = a.bench_models_dir or os.path.join(a.work, "bench_models")

    rows = []
    device = "Vulkan device: see TESSERA_VULKAN_DEVICE"
    for name in a.models:
        path, args = real_model(name, a.models_dir, a.work) if name in REAL else synth_model(name, bench_dir)
        if path is None:
            rows.append(f"| {name} | - | - | - | - | skipped: {args} |")
            print(rows[-1], flush=True)
            continue
        tsr = os.path.join(a.work, name + ".tsr")
        rc, out = run([a.tessera, "convert", path, "-o", tsr], 1800)
        if rc != 0:
            rows.append(f"| {name} | - | - | - | - | convert failed |")
            print(rows[-1], flush=True)
            continue
        on_vk, on_cpu, _ = placements(a.tessera, tsr, args, a.work)
        cpu, cerr = bench(a.tessera, tsr, args, "cpu", a.runs, a.warmup, a.threads)
        vk, verr = bench(a.tessera, tsr, args, "vulkan", a.runs, a.warmup, a.threads)
        if cpu is None or vk is None:
            rows.append(f"| {name} | - | - | - | - | bench failed: {(cerr if cpu is None else verr)[:200]} |")
        else:
            ratio = vk["median_ms"] / cpu["median_ms"] if cpu["median_ms"] else float("nan")
            rows.append(f"| {name} | {cpu['median_ms']:.2f} | {vk['median_ms']:.2f} | {ratio:.2f} | "
                        f"{on_vk} / {on_cpu} | |")
        print(rows[-1], flush=True)

    # The device's name, when vulkaninfo (package vulkan-tools) is there.
    try:
        rc, out = run(["vulkaninfo", "--summary"], 60)
        names = [l.split("=", 1)[1].strip() for l in out.splitlines() if "deviceName" in l]
        if names:
            device = "Vulkan devices: " + ", ".join(names)
    except (OSError, subprocess.TimeoutExpired):
        pass
    table = [f"Tessera Vulkan vs CPU backend, median latency in ms over {a.runs} runs after {a.warmup} warm-up, "
             f"{a.threads} CPU threads; {device}",
             "", "| model | cpu ms | vulkan ms | vulkan / cpu | nodes on vulkan / cpu | note |",
             "| --- | ---: | ---: | ---: | ---: | --- |"] + rows
    text = "\n".join(table)
    print()
    print(text)
    if a.md_out:
        with open(a.md_out + ".tmp", "w") as f:
            f.write(text + "\n")
        os.replace(a.md_out + ".tmp", a.md_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
