#!/usr/bin/env python3
"""Prints the demo's markdown table from what scripts/demo.sh left in its folder.

    report.py DEMO_DIR --models det rec cls vad [--tol 1e-4] [--threads 1] [--runs 20]

Per model it reads DEMO_DIR/<model>/inspect.json (`tessera inspect --json`: "nodes"),
bench.json (the last line of `tessera bench --json`: "median_ms"), compare.json
(compare.py: "max_abs", "rel", "ort_median_ms") and `failed` (the step that failed, if one
did). Exit status 1 when a model has no result or its relative error exceeds --tol.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from real_models import MODELS  # noqa: E402


def _load_json(path):
    """The JSON object in the file (the whole text, else its last line), or None."""
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    for candidate in (text, text.splitlines()[-1] if text else ""):
        try:
            obj = json.loads(candidate)
            if isinstance(obj, dict):
                return obj
        except ValueError:
            pass
    return None


def _float(x):
    if x == "inf":
        return math.inf
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _fmt(x, spec):
    return "—" if x is None else ("inf" if x == math.inf else format(x, spec))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("demo_dir")
    ap.add_argument("--models", nargs="+", required=True)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()

    tol = f"{args.tol:.0e}".replace("e-0", "e-")
    print(f"| model | nodes | max abs diff | rel error | Tessera median ms "
          f"| onnxruntime median ms | rel error ≤ {tol} |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    all_ok = True
    for m in args.models:
        d = os.path.join(args.demo_dir, m)
        inspect = _load_json(os.path.join(d, "inspect.json")) or {}
        bench = _load_json(os.path.join(d, "bench.json")) or {}
        cmp = _load_json(os.path.join(d, "compare.json")) or {}
        failed = None
        if os.path.isfile(os.path.join(d, "failed")):
            with open(os.path.join(d, "failed")) as f:
                failed = f.read().strip() or "a step"
        nodes = inspect.get("nodes")
        max_abs = _float(cmp.get("max_abs"))
        rel = _float(cmp.get("rel"))
        t_ms = _float(bench.get("median_ms"))
        o_ms = _float(cmp.get("ort_median_ms"))
        if failed:
            verdict, ok = f"FAIL ({failed} failed)", False
        elif rel is None:
            verdict, ok = "FAIL (no comparison)", False
        elif rel <= args.tol:
            verdict, ok = "pass", True
        else:
            verdict, ok = "FAIL", False
        all_ok &= ok
        name = f"{MODELS[m][4]} (`{MODELS[m][0]}`)" if m in MODELS else m
        print(f"| {name} | {nodes if nodes is not None else '—'} | {_fmt(max_abs, '.2e')} "
              f"| {_fmt(rel, '.2e')} | {_fmt(t_ms, '.2f')} | {_fmt(o_ms, '.2f')} | {verdict} |")
    print()
    print(f"Both runtimes: {args.threads} thread(s), median of {args.runs} runs after warm-up; "
          f"rel error = ‖tessera − ort‖₂ / ‖ort‖₂, worst output of the model.")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
