"""One real model on a cross-built tessera against the host's tessera.

    model_vs_host.py --model cls --host-tessera BIN --target-tessera BIN [--emulator "qemu-aarch64 -L /usr/aarch64-linux-gnu"]
                     --models-dir DIR --work-dir DIR

The host's full tessera converts the ONNX model (scripts/fetch_models.sh) to .tsr and runs
it on the model's real input (scripts/demo/prepare_inputs.py); the target's tessera (an
aarch64 build, run under the emulator) runs the same .tsr on the same .npy input. Right
looks like: the same output names, shapes and dtypes, and for every output
    ||target - host||_2 / ||host||_2 <= 1e-5
(both run float32 kernels of the same reference math; the NEON and AVX micro-kernels sum in
different orders, so they differ by rounding only). Any missing piece (model, emulator,
binary, a failing command) is a failure with its reason, never a skip.
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "demo"))

REL_TOL = 1e-5
TIMEOUT_S = 600


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(cmd, what):
    print("$ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
    except FileNotFoundError as e:
        fail(f"{what}: {e}")
    except subprocess.TimeoutExpired:
        fail(f"{what}: no exit within {TIMEOUT_S} s")
    out = p.stdout.decode("utf-8", "replace").strip()
    if out:
        print("  " + out.replace("\n", "\n  "))
    if p.returncode != 0:
        fail(f"{what}: exit status {p.returncode}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--host-tessera", required=True)
    ap.add_argument("--target-tessera", required=True)
    ap.add_argument("--emulator", default="", help="command line that runs a target program (empty: run it directly)")
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    a = ap.parse_args()

    try:
        import numpy as np
        from compare import sanitize
        from prepare_inputs import model_inputs
        from real_models import MODELS
    except ImportError as e:
        fail(f"{e}: run with the Python of scripts/install_deps.sh (numpy, scikit-learn)")
    for path, what in ((a.host_tessera, "host tessera"), (a.target_tessera, "target tessera")):
        if not os.access(path, os.X_OK):
            fail(f"{what} {path} is not an executable")
    emu = shlex.split(a.emulator)
    if emu and not shutil.which(emu[0]):
        fail(f"emulator {emu[0]} not found (Debian: qemu-user)")
    onnx = os.path.join(a.models_dir, MODELS[a.model][0])
    if not os.path.isfile(onnx):
        fail(f"model {onnx} missing: run scripts/fetch_models.sh")

    shutil.rmtree(a.work_dir, ignore_errors=True)
    os.makedirs(a.work_dir)
    input_args = []
    for name, arr in model_inputs(a.model).items():
        path = os.path.join(a.work_dir, sanitize(name) + ".npy")
        np.save(path, arr)
        input_args += ["--input", f"{name}={path}"]
    tsr = os.path.join(a.work_dir, a.model + ".tsr")
    host_out, target_out = os.path.join(a.work_dir, "host"), os.path.join(a.work_dir, "target")
    run([a.host_tessera, "convert", onnx, "-o", tsr], "host convert")
    run([a.host_tessera, "run", tsr, *input_args, "--output-dir", host_out], "host run")
    run([*emu, a.target_tessera, "run", tsr, *input_args, "--output-dir", target_out, "--verbose"], "target run")

    host_files, target_files = sorted(os.listdir(host_out)), sorted(os.listdir(target_out))
    if not host_files or host_files != target_files:
        fail(f"output files differ: host {host_files}, target {target_files}")
    bad = []
    for f in host_files:
        want = np.load(os.path.join(host_out, f))
        got = np.load(os.path.join(target_out, f))
        if got.shape != want.shape or got.dtype != want.dtype:
            bad.append(f)
            print(f"FAIL {f}: target {got.dtype}{list(got.shape)}, host {want.dtype}{list(want.shape)}")
            continue
        w, g = want.astype(np.float64), got.astype(np.float64)
        denom = np.linalg.norm(w)
        rel = np.linalg.norm(g - w) / denom if denom > 0 else np.linalg.norm(g - w)
        ok = bool(np.isfinite(rel)) and rel <= REL_TOL
        print(f"{'ok  ' if ok else 'FAIL'} {f:<28} {str(list(want.shape)):<16} max abs {np.max(np.abs(g - w)):.3e}"
              f"  rel {rel:.3e} (bound {REL_TOL:g})")
        if not ok:
            bad.append(f)
    if bad:
        fail(f"{a.model}: outputs off: {bad}")
    print(f"{a.model}: target matches host")


if __name__ == "__main__":
    main()
