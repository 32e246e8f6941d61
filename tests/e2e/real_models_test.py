#!/usr/bin/env python3
"""End-to-end tests of the `tessera` CLI, registered with ctest by tests/e2e/e2e.cmake.

    real_models_test.py --tessera BIN --models-dir DIR --work-dir DIR --model det|rec|cls|vad
    real_models_test.py --tessera BIN --models-dir DIR --work-dir DIR --case CASE
    real_models_test.py ... --model NAME --backend vulkan

--backend B (with --model): runs the model on backend B (`tessera run --backend B --verbose`)
and on the CPU backend, and requires every output within relative error 1e-4 of the CPU
backend's (and of onnxruntime's), and at least one node placed on B; skipped (77) when
backend B cannot be made here (the CLI's warning that its nodes run on the next backend).

--model NAME: converts the real model, runs it with `tessera run` on its real input
(scripts/demo/prepare_inputs.py), runs onnxruntime on the same input now, and requires for
every output the same shape and dtype and a relative error
    ||tessera - ort||_2 / ||ort||_2 <= 1e-4.

--case CASE: one bad-input case (see CASES). Each must end with an exit status in 1..127
(not 0, not killed by a signal, not 128+N), within a time limit (no hang), and with a message
on stdout/stderr naming the problem: the file or the tensor, and for shapes and dtypes the
kind of mismatch.

Exit status: 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE: the Python packages or the
real models are missing; the reason is printed).
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "demo"))

SKIP = 77
REL_TOL = 1e-4
CONVERT_TIMEOUT_S = 600
RUN_TIMEOUT_S = 1200


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


try:
    import numpy as np
    from compare import compare_dir, run_ort, sanitize
    from prepare_inputs import model_inputs
    from real_models import MODELS
except ImportError as e:  # the venv of scripts/install_deps.sh is not there
    skip(f"Python package missing ({e}); run scripts/install_deps.sh")


class Failure(Exception):
    pass


def tessera(binary, *args, timeout=RUN_TIMEOUT_S):
    """Runs the CLI; returns (exit status, stdout + stderr). A hang is a failure."""
    cmd = [binary, *map(str, args)]
    print("$ " + " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure(f"hung: no exit within {timeout} s: {' '.join(cmd)}")
    out = p.stdout.decode("utf-8", "replace")
    if out.strip():
        print("  " + out.strip().replace("\n", "\n  "))
    return p.returncode, out


def model_path(models_dir, name):
    path = os.path.join(models_dir, MODELS[name][0])
    if not os.path.isfile(path):
        skip(f"real model {path} missing; run scripts/fetch_models.sh")
    return path


def write_inputs(work, inputs):
    """Saves {name: array} as work/<name>.npy; returns the --input NAME=FILE arguments."""
    args = []
    for name, arr in inputs.items():
        path = os.path.join(work, sanitize(name) + ".npy")
        np.save(path, arr)
        args += ["--input", f"{name}={path}"]
    return args


def convert(binary, onnx, tsr):
    rc, out = tessera(binary, "convert", onnx, "-o", tsr, timeout=CONVERT_TIMEOUT_S)
    if rc != 0 or not os.path.isfile(tsr):
        raise Failure(f"convert {onnx} failed (exit {rc})")


# ---- real models against onnxruntime ----

def report(rows, what):
    """Prints one line per output; returns the names of the outputs off by more than REL_TOL."""
    bad = []
    for r in rows:
        ok = r["problem"] is None and r["rel"] <= REL_TOL
        print(f"{'ok  ' if ok else 'FAIL'} {r['name']:<32} {str(r['shape']):<20} "
              f"max abs {r['max_abs']:.3e}  rel {r['rel']:.3e} (bound {REL_TOL:g}, vs {what})"
              + (f"  {r['problem']}" if r["problem"] else ""))
        if not ok:
            bad.append(r["name"])
    return bad


def check_model_on_backend(binary, models_dir, work, name, backend):
    """The model on `backend` against the CPU backend and onnxruntime."""
    onnx = model_path(models_dir, name)
    inputs = model_inputs(name)
    input_args = write_inputs(work, inputs)
    tsr = os.path.join(work, name + ".tsr")
    convert(binary, onnx, tsr)
    cpu_dir = os.path.join(work, "out_cpu")
    rc, _ = tessera(binary, "run", tsr, *input_args, "--output-dir", cpu_dir)
    if rc != 0:
        raise Failure(f"tessera run (cpu) failed (exit {rc})")
    dev_dir = os.path.join(work, "out_" + backend)
    rc, out = tessera(binary, "run", tsr, *input_args, "--output-dir", dev_dir,
                      "--backend", backend, "--verbose")
    if rc != 0:
        raise Failure(f"tessera run --backend {backend} failed (exit {rc})")
    placed = out.count(f"-> {backend}")
    on_cpu = sum(1 for line in out.splitlines() if " node " in line and line.rstrip().endswith("-> cpu"))
    if placed == 0:
        # The CLI's warning when the backend cannot be made (no device, no loader, not
        # built): "backend 'B': <why>; its nodes run on the next backend of the list".
        for line in out.splitlines():
            if f"backend '{backend}'" in line and "next backend" in line:
                skip(f"backend {backend} is not available here: {line.strip()}")
        raise Failure(f"no node ran on {backend}")
    print(f"placements: {placed} nodes and copies on {backend}, {on_cpu} nodes on the cpu")
    cpu = {}
    want = run_ort(onnx, inputs, threads=1)
    for n in want:
        cpu[n] = np.load(os.path.join(cpu_dir, sanitize(n) + ".npy"))
    bad = report(compare_dir(cpu, dev_dir), "cpu backend")
    bad += report(compare_dir(want, dev_dir), "onnxruntime")
    if bad:
        raise Failure(f"{name} on {backend}: outputs off: {bad}")


def check_model(binary, models_dir, work, name):
    onnx = model_path(models_dir, name)
    inputs = model_inputs(name)
    input_args = write_inputs(work, inputs)
    tsr = os.path.join(work, name + ".tsr")
    convert(binary, onnx, tsr)
    out_dir = os.path.join(work, "out")
    rc, _ = tessera(binary, "run", tsr, *input_args, "--output-dir", out_dir)
    if rc != 0:
        raise Failure(f"tessera run failed (exit {rc})")

    want = run_ort(onnx, inputs, threads=1)
    rows = compare_dir(want, out_dir)
    expected_files = {sanitize(n) + ".npy" for n in want}
    extra = sorted(set(os.listdir(out_dir)) - expected_files)
    bad = []
    for r in rows:
        ok = r["problem"] is None and r["rel"] <= REL_TOL
        print(f"{'ok  ' if ok else 'FAIL'} {r['name']:<32} {str(r['shape']):<20} "
              f"max abs {r['max_abs']:.3e}  rel {r['rel']:.3e} (bound {REL_TOL:g})"
              + (f"  {r['problem']}" if r["problem"] else ""))
        if not ok:
            bad.append(r["name"])
    if extra:
        print(f"FAIL files in {out_dir} that are no output of the model: {extra}")
    if bad or extra:
        raise Failure(f"{name}: outputs off: {bad}" + (f"; unexpected files {extra}" if extra else ""))


# ---- bad input: each must fail cleanly with a message naming the problem ----

def expect_clean_error(rc, out, must_name, any_of=()):
    """rc in 1..127; out contains every string of must_name and (case-insensitively) one of
    any_of when given."""
    if rc == 0:
        raise Failure("exit status 0 for bad input")
    if rc < 0 or rc >= 128:
        sig = -rc if rc < 0 else rc - 128
        raise Failure(f"crashed: exit status {rc} (signal {sig})")
    for s in must_name:
        if s not in out:
            raise Failure(f"the message does not name {s!r}")
    if any_of and not any(w.lower() in out.lower() for w in any_of):
        raise Failure(f"the message says none of {list(any_of)}")
    print(f"ok: exit {rc}, the message names {list(must_name)}")


def _vad(binary, models_dir, work):
    """The converted VAD model and its valid inputs (three: input, state, sr)."""
    tsr = os.path.join(work, "vad.tsr")
    convert(binary, model_path(models_dir, "vad"), tsr)
    return tsr, model_inputs("vad")


def case_convert_missing_file(binary, models_dir, work):
    missing = os.path.join(work, "no_such_model.onnx")
    rc, out = tessera(binary, "convert", missing, "-o", os.path.join(work, "x.tsr"))
    expect_clean_error(rc, out, ["no_such_model.onnx"])


def case_convert_malformed_onnx(binary, models_dir, work):
    bad = os.path.join(work, "malformed_model.onnx")
    with open(bad, "wb") as f:
        f.write(np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    tsr = os.path.join(work, "malformed_model.tsr")
    rc, out = tessera(binary, "convert", bad, "-o", tsr)
    expect_clean_error(rc, out, ["malformed_model.onnx"])
    if os.path.exists(tsr):
        raise Failure(f"a failed convert left {tsr} behind")


def case_run_missing_input(binary, models_dir, work):
    tsr, inputs = _vad(binary, models_dir, work)
    del inputs["state"]
    rc, out = tessera(binary, "run", tsr, *write_inputs(work, inputs),
                      "--output-dir", os.path.join(work, "out"))
    expect_clean_error(rc, out, ["state"])


def case_run_wrong_shape(binary, models_dir, work):
    tsr, inputs = _vad(binary, models_dir, work)
    inputs["state"] = np.zeros((2, 31, 64), np.float32)   # the model declares [2, batch, 128]
    rc, out = tessera(binary, "run", tsr, *write_inputs(work, inputs),
                      "--output-dir", os.path.join(work, "out"))
    expect_clean_error(rc, out, ["state"], any_of=["shape", "dim", "rank"])


def case_run_wrong_dtype(binary, models_dir, work):
    tsr, inputs = _vad(binary, models_dir, work)
    inputs["state"] = inputs["state"].astype(np.float64)  # the model declares float32
    rc, out = tessera(binary, "run", tsr, *write_inputs(work, inputs),
                      "--output-dir", os.path.join(work, "out"))
    expect_clean_error(rc, out, ["state"], any_of=["type", "float64", "double", "f8"])


def case_run_truncated_tsr(binary, models_dir, work):
    tsr, inputs = _vad(binary, models_dir, work)
    cut = os.path.join(work, "truncated_model.tsr")
    with open(tsr, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[: len(data) // 2])
    rc, out = tessera(binary, "run", cut, *write_inputs(work, inputs),
                      "--output-dir", os.path.join(work, "out"))
    expect_clean_error(rc, out, ["truncated_model.tsr"])


def case_unknown_flag(binary, models_dir, work):
    tsr, inputs = _vad(binary, models_dir, work)
    rc, out = tessera(binary, "run", tsr, *write_inputs(work, inputs),
                      "--output-dir", os.path.join(work, "out"), "--no-such-flag")
    expect_clean_error(rc, out, ["--no-such-flag"])
    # A flag given twice is not an error: the last value wins (the JSON line says which).
    rc, out = tessera(binary, "bench", tsr, *write_inputs(work, inputs), "--runs", "1", "--warmup", "0",
                      "--threads", "1", "--threads", "2", "--json")
    if rc != 0:
        raise Failure(f"--threads given twice: exit {rc}:\n{out}")
    if '"threads_requested":2' not in out:
        raise Failure(f"--threads 1 --threads 2 did not take the last value:\n{out}")
    print("ok: --threads 1 --threads 2 runs with 2")


def case_run_threads(binary, models_dir, work):
    tsr, inputs = _vad(binary, models_dir, work)
    args = write_inputs(work, inputs)
    outs = {}
    for t in ("1", "2", "3"):
        out_dir = os.path.join(work, "out" + t)
        rc, out = tessera(binary, "run", tsr, *args, "--threads", t, "--output-dir", out_dir)
        if rc != 0:
            raise Failure(f"run --threads {t}: exit {rc}:\n{out}")
        outs[t] = {f: np.load(os.path.join(out_dir, f)) for f in sorted(os.listdir(out_dir))}
    for t in ("2", "3"):
        for f, a in outs["1"].items():
            d = float(np.max(np.abs(outs[t][f].astype(np.float64) - a))) if a.size else 0.0
            if not d <= 1e-5 * max(1.0, float(np.max(np.abs(a)))):
                raise Failure(f"run --threads {t}: output {f} differs from --threads 1 by {d}")
    rc, out = tessera(binary, "run", tsr, *args, "--threads", "-1", "--output-dir", os.path.join(work, "bad"))
    expect_clean_error(rc, out, ["--threads"])
    rc, out = tessera(binary, "run", tsr, *args, "--threads", "abc", "--output-dir", os.path.join(work, "bad"))
    expect_clean_error(rc, out, ["--threads", "abc", "not a whole number"])
    print("ok: run --threads 1, 2 and 3 agree; --threads -1 and abc are refused")


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessera", required=True, help="the tessera CLI binary")
    ap.add_argument("--models-dir", required=True, help="folder of scripts/fetch_models.sh")
    ap.add_argument("--work-dir", required=True, help="scratch folder (emptied first)")
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", choices=sorted(MODELS))
    which.add_argument("--case", choices=sorted(CASES))
    ap.add_argument("--backend", default="cpu", help="with --model: the backend to check against the CPU")
    args = ap.parse_args()

    if not os.access(args.tessera, os.X_OK):
        print(f"FAIL: no tessera binary at {args.tessera}")
        return 1
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    try:
        if args.model and args.backend != "cpu":
            check_model_on_backend(args.tessera, args.models_dir, args.work_dir, args.model, args.backend)
        elif args.model:
            check_model(args.tessera, args.models_dir, args.work_dir, args.model)
        else:
            CASES[args.case](args.tessera, args.models_dir, args.work_dir)
    except Failure as e:
        print(f"FAIL: {e}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
