#!/usr/bin/env python3
"""Compares Tessera's outputs with onnxruntime's on the same inputs, and times onnxruntime.

    compare.py MODEL.onnx --input NAME=FILE.npy ... --tessera-dir DIR
               [--threads 1] [--runs 20] [--warmup 3] [--tol 1e-4] [--json-out FILE]

DIR holds `tessera run`'s outputs: DIR/<name>.npy, <name> being the ONNX output name with
every character outside [A-Za-z0-9._-] replaced by '_'. onnxruntime runs the model with all
graph optimizations (ORT_ENABLE_ALL), `--threads` intra-op threads, sequential execution.

Per output it prints the max absolute difference and the relative error
    rel = ||tessera - ort||_2 / ||ort||_2   (in float64; max abs when ||ort||_2 == 0),
then the worst of each over all outputs and onnxruntime's median latency (ms) over `--runs`
runs after `--warmup` runs. A missing output file, another shape or dtype, or a NaN where
onnxruntime has none counts as rel = max abs = inf. The last line printed is one JSON object
(also written to --json-out). Exit status: 0, or 1 when --tol is given and the worst relative
error exceeds it, 2 on a usage error.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys
import time

import numpy as np


def sanitize(name):
    """The file-name form of a tensor name: every character outside [A-Za-z0-9._-] -> '_'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def parse_inputs(pairs):
    """['NAME=FILE.npy', ...] -> {NAME: array}."""
    feeds = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"compare.py: --input wants NAME=FILE.npy, got {pair!r}")
        feeds[name] = np.load(path)
    return feeds


def make_session(model_path, threads=1):
    """An onnxruntime CPU session with all graph optimizations and `threads` threads."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model_path, sess_options=so, providers=["CPUExecutionProvider"])


def run_ort(model_path, feeds, threads=1):
    """{output name: array} computed by onnxruntime."""
    sess = make_session(model_path, threads)
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def time_ort(sess, feeds, runs=20, warmup=3):
    """Latencies of sess.run in ms: (median, p90) over `runs` runs after `warmup` runs."""
    for _ in range(warmup):
        sess.run(None, feeds)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    p90 = times[min(len(times) - 1, math.ceil(0.9 * len(times)) - 1)]
    return statistics.median(times), p90


def compare_arrays(got, want):
    """(max abs difference, relative error, problem or None) of got against want."""
    if got is None:
        return math.inf, math.inf, "missing"
    if got.shape != want.shape:
        return math.inf, math.inf, f"shape {list(got.shape)} != {list(want.shape)}"
    if got.dtype != want.dtype:
        return math.inf, math.inf, f"dtype {got.dtype} != {want.dtype}"
    if want.size == 0:
        return 0.0, 0.0, None
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return math.inf, math.inf, "NaN where onnxruntime has none (or the reverse)"
    finite = ~np.isnan(w)
    d = np.abs(g[finite] - w[finite])
    max_abs = float(d.max()) if d.size else 0.0
    norm = float(np.linalg.norm(w[finite]))
    rel = float(np.linalg.norm(d)) / norm if norm > 0 else max_abs
    if math.isnan(rel):   # inf - inf
        rel = max_abs = math.inf
    return max_abs, rel, None


def compare_dir(ort_outputs, tessera_dir):
    """Per output: dict(name, file, shape, max_abs, rel, problem)."""
    rows = []
    for name, want in ort_outputs.items():
        path = os.path.join(tessera_dir, sanitize(name) + ".npy")
        got = np.load(path) if os.path.isfile(path) else None
        max_abs, rel, problem = compare_arrays(got, want)
        if problem == "missing":
            problem = f"missing {path}"
        rows.append(dict(name=name, file=path, shape=list(want.shape), max_abs=max_abs,
                         rel=rel, problem=problem))
    return rows


def _num(x):
    """A float for JSON: inf -> "inf", NaN -> null (strict JSON has neither)."""
    if math.isnan(x):
        return None
    return x if math.isfinite(x) else "inf"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="the ONNX model")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    ap.add_argument("--tessera-dir", required=True, help="folder of Tessera's <output>.npy")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--tol", type=float, help="fail (exit 1) when the worst rel error exceeds it")
    ap.add_argument("--json-out", help="also write the JSON result here")
    args = ap.parse_args(argv)

    feeds = parse_inputs(args.input)
    sess = make_session(args.model, args.threads)
    names = [o.name for o in sess.get_outputs()]
    ort_outputs = dict(zip(names, sess.run(names, feeds)))
    rows = compare_dir(ort_outputs, args.tessera_dir)
    median_ms, p90_ms = time_ort(sess, feeds, args.runs, args.warmup) if args.runs > 0 \
        else (math.nan, math.nan)

    for r in rows:
        extra = f"  ({r['problem']})" if r["problem"] else ""
        print(f"{r['name']:<32} {str(r['shape']):<20} max abs {r['max_abs']:.3e}  "
              f"rel {r['rel']:.3e}{extra}")
    worst_abs = max((r["max_abs"] for r in rows), default=0.0)
    worst_rel = max((r["rel"] for r in rows), default=0.0)
    print(f"worst: max abs {worst_abs:.3e}  rel {worst_rel:.3e}; onnxruntime median "
          f"{median_ms:.3f} ms, p90 {p90_ms:.3f} ms ({args.threads} thread(s), {args.runs} runs)")
    result = {
        "model": args.model,
        "outputs": [{**r, "max_abs": _num(r["max_abs"]), "rel": _num(r["rel"])} for r in rows],
        "max_abs": _num(worst_abs),
        "rel": _num(worst_rel),
        "ort_median_ms": _num(median_ms),
        "ort_p90_ms": _num(p90_ms),
        "threads": args.threads,
        "runs": args.runs,
    }
    line = json.dumps(result)
    if args.json_out:
        with open(args.json_out + ".tmp", "w") as f:
            f.write(line + "\n")
        os.replace(args.json_out + ".tmp", args.json_out)
    print(line)
    if args.tol is not None and not worst_rel <= args.tol:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
