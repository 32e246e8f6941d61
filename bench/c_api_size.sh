#!/usr/bin/env bash
# The embedded library's size and start-up time (issue 5), side by side with onnxruntime.
#
# Prints:
#  1. sizes in bytes, stripped (aarch64-linux-gnu-strip / strip): the aarch64 minimal
#     libtessera.so, the C example (apps/examples/c) linked against libtessera.a (libc and
#     libstdc++ shared), and the same fully static (-static: libc and libstdc++ inside); the
#     x86-64 libtessera.so of the host build next to them. The goal: the aarch64 library
#     under 1.5 MB (1,572,864 bytes).
#  2. start-up on this machine (x86-64 host), single thread: milliseconds from
#     tsr_model_load to the end of the first tsr_session_run (the example's --time, one
#     process per sample), and onnxruntime's InferenceSession creation plus first run in one
#     Python process per sample (import time excluded), for the PP-OCR detection model and
#     the direction classifier on their real inputs; the median of RUNS samples and the
#     ratio onnxruntime / Tessera.
#
# Usage: bash bench/c_api_size.sh
# Env:   BUILD_DIR_ARM  aarch64 build (scripts/cross_build_arm64.sh; default build-arm64)
#        BUILD_DIR      host build with the converter and the C library (default build)
#        TESSERA_PYTHON Python with numpy and onnxruntime (default $BUILD_DIR/venv/bin/python)
#        TESSERA_MODELS_DIR  ONNX models (default $BUILD_DIR/models)
#        RUNS           samples per start-up figure (default 5)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
abs() { case "$1" in /*) echo "$1" ;; *) echo "$ROOT/$1" ;; esac; }
ARM="$(abs "${BUILD_DIR_ARM:-build-arm64}")"
HOST="$(abs "${BUILD_DIR:-build}")"
PY="${TESSERA_PYTHON:-$HOST/venv/bin/python}"
MODELS="${TESSERA_MODELS_DIR:-$HOST/models}"
RUNS="${RUNS:-5}"
die() { echo "c_api_size: error: $*" >&2; exit 1; }
[[ -f "$ARM/CMakeCache.txt" ]] || die "no aarch64 build at $ARM: run scripts/cross_build_arm64.sh"
[[ -x "$HOST/tessera" ]] || die "no host tessera at $HOST/tessera"
[[ -x "$PY" ]] || die "no Python at $PY"
command -v aarch64-linux-gnu-gcc >/dev/null || die "aarch64-linux-gnu-gcc not found (g++-aarch64-linux-gnu)"
make -C "$ARM" --no-print-directory -s tessera_c_shared tessera_c_static >/dev/null
make -C "$HOST" --no-print-directory -s tessera_c_shared tessera_c_static >/dev/null

W="$(mktemp -d /tmp/tessera_c_api_size.XXXXXX)"
trap 'rm -rf "$W"' EXIT
cmake --install "$ARM" --prefix "$W/arm" >/dev/null
cmake --install "$HOST" --prefix "$W/host" >/dev/null
EX="$ROOT/apps/examples/c/tessera_classify.c"
CFLAGS=(-std=c99 -O2 -Wall -Wextra -Werror)

aarch64-linux-gnu-strip -o "$W/arm_lib.so" "$W/arm/lib/libtessera.so"
aarch64-linux-gnu-gcc "${CFLAGS[@]}" -I"$W/arm/include" "$EX" "$W/arm/lib/libtessera.a" -lstdc++ -lm -o "$W/arm_ex_a"
aarch64-linux-gnu-gcc "${CFLAGS[@]}" -static -I"$W/arm/include" "$EX" "$W/arm/lib/libtessera.a" -lstdc++ -lm -o "$W/arm_ex_static"
aarch64-linux-gnu-strip "$W/arm_ex_a" "$W/arm_ex_static"
strip -o "$W/host_lib.so" "$W/host/lib/libtessera.so"
size_of() { stat -c %s "$1"; }
cache_opt() { sed -n "s/^$1:BOOL=//p" "$ARM/CMakeCache.txt"; }
ARM_CFG="TESSERA_MINIMAL=$(cache_opt TESSERA_MINIMAL), TESSERA_SIZE_OPT=$(cache_opt TESSERA_SIZE_OPT)"
printf '%-72s %12s\n' "stripped size" "bytes"
printf '%-72s %12s  (%s)\n' "aarch64 libtessera.so ($ARM_CFG)" "$(size_of "$W/arm_lib.so")" \
  "$( (($(size_of "$W/arm_lib.so") < 1572864)) && echo "under the 1.5 MB goal" || echo "OVER the 1.5 MB goal")"
printf '%-72s %12s\n' "aarch64 example + libtessera.a (libc, libstdc++ shared)" "$(size_of "$W/arm_ex_a")"
printf '%-72s %12s\n' "aarch64 example, fully static (-static)" "$(size_of "$W/arm_ex_static")"
printf '%-72s %12s\n' "x86-64 libtessera.so (host build: x86 + AVX2 + AVX-512 kernels)" "$(size_of "$W/host_lib.so")"
echo "aarch64 libtessera.so needs: $(readelf -d "$W/arm/lib/libtessera.so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"

# ---- start-up: Tessera (C example) vs onnxruntime, same model, same input ----
gcc "${CFLAGS[@]}" -I"$W/host/include" "$EX" -L"$W/host/lib" -ltessera -Wl,-rpath,"$W/host/lib" -o "$W/host_ex"
"$PY" - "$HOST/tessera" "$W/host_ex" "$MODELS" "$W" "$RUNS" "$ROOT" <<'PYEOF'
import os, re, statistics, subprocess, sys
tessera, example, models, work, runs, root = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
sys.path.insert(0, os.path.join(root, "scripts", "demo"))
import numpy as np
from prepare_inputs import model_inputs
from real_models import MODELS

ORT = r'''
import sys, time, numpy as np
import onnxruntime as ort
x = np.load(sys.argv[2])
t0 = time.perf_counter()
o = ort.SessionOptions(); o.intra_op_num_threads = 1; o.inter_op_num_threads = 1
s = ort.InferenceSession(sys.argv[1], o, providers=["CPUExecutionProvider"])
s.run(None, {s.get_inputs()[0].name: x})
print((time.perf_counter() - t0) * 1e3)
'''
print()
print(f"start-up, x86-64 host, 1 thread, median of {runs} runs (one process each): "
      "tsr_model_load -> first run finished vs onnxruntime InferenceSession() -> first run finished")
print(f"{'model':<6} {'input':<18} {'Tessera ms':>11} {'onnxruntime ms':>15} {'ratio ort/tsr':>14}")
for m in ("det", "cls"):
    onnx = os.path.join(models, MODELS[m][0])
    if not os.path.isfile(onnx):
        print(f"{m:<6} skipped: {onnx} missing (scripts/fetch_models.sh)")
        continue
    tsr = os.path.join(work, m + ".tsr")
    subprocess.run([tessera, "convert", onnx, "-o", tsr], check=True, stdout=subprocess.DEVNULL)
    (name, arr), = model_inputs(m).items()
    npy = os.path.join(work, m + "_x.npy")
    np.save(npy, np.ascontiguousarray(arr, dtype=np.float32))
    t, o = [], []
    for _ in range(runs):
        out = subprocess.run([example, tsr, npy, "-t", "1", "-k", "1", "--time"], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        t.append(float(re.search(r"load\+first run: ([\d.]+) ms", out).group(1)))
        o.append(float(subprocess.run([sys.executable, "-c", ORT, onnx, npy], check=True,
                                      stdout=subprocess.PIPE, text=True).stdout))
    tm, om = statistics.median(t), statistics.median(o)
    print(f"{m:<6} {str(list(arr.shape)):<18} {tm:>11.1f} {om:>15.1f} {om / tm:>13.2f}x")
PYEOF
