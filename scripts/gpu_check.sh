#!/usr/bin/env bash
# Checks Tessera's CUDA backend on a machine with an NVIDIA GPU, in under 8 minutes:
#   1. GPU facts (nvidia-smi), the libraries the binaries load
#   2. the CUDA unit tests (every kernel against the CPU reference), and the NCCL
#      communicator's tests at world size 1 (train/comm)
#   3. the ONNX conformance runner with --backend cuda (time-capped; summary line)
#   4. the four real models on CUDA against the CPU backend (relative error, goal <= 1e-4)
#   5. ResNet-50 and the BERT-style encoder at batch 1 and 32: Tessera CUDA vs PyTorch eager
#   6. the Vulkan tests and the Vulkan-vs-CPU benchmark on the same GPU (NVIDIA's driver;
#      the loader from the system or from .gl/*.deb)
# Each stage has a timeout; a failing stage says why and the script goes on. Everything
# printed also goes to $OUT/gpu_check.log (when OUT is set) or .gpu_check/gpu_check.log, with
# the stages' tables beside it.
#
# Usage:
#   bash scripts/gpu_check.sh --prebuilt .devbuild    binaries from scripts/gpu_pack.sh
#   bash scripts/gpu_check.sh                         build here first (needs Tessera's
#                                                     build dependencies and CUDA), in build_gpu/
# Env: GPU_CHECK_SKIP (comma-separated stage functions to skip: unit_tests, nccl_tests,
# conformance, models, bench, vulkan), PYTHON (default python3; needs numpy, onnx; torch for
# stage 5), CONFORMANCE_SECONDS
# (default 100), BENCH_RUNS (default 15). Worst case with every stage at its timeout: 30 + 90
# + 30 + 130 + 60 + 120 s = 7 min 40 s for CUDA (on an H200: about 2 min), plus 150 s for
# Vulkan: with CONFORMANCE_SECONDS=60 the whole stays under 9 min 30 s; the CUDA stages alone
# under 8 min.
# Without a GPU every GPU stage reports "no CUDA device" and the script still ends cleanly.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PREBUILT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prebuilt) PREBUILT="${2:?--prebuilt needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "gpu_check: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
LOG_DIR="${OUT:-$ROOT/.gpu_check}"
mkdir -p "$LOG_DIR"
exec > >(tee "$LOG_DIR/gpu_check.log") 2>&1
# A Python with numpy and onnx (the GPU machine's PyTorch venv has both, and torch).
PY=""
for p in ${PYTHON:-} python3 /opt/torch/.venv/bin/python3; do
  if "$p" -c "import numpy, onnx" 2>/dev/null; then PY="$p"; break; fi
done
PY="${PY:-python3}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/tessera_gpu_check.XXXXXX")"
START=$SECONDS
declare -a SUMMARY=()
say() { echo "[gpu_check $(printf '%3d' $((SECONDS - START)))s] $*"; }
# stage NAME TIMEOUT_S FUNCTION: runs the shell function in a child bash under a timeout
# (which kills the whole stage on expiry), records the outcome.
stage() {
  local name="$1" limit="$2" fn="$3"
  if [[ -n "${GPU_CHECK_SKIP:-}" && ",${GPU_CHECK_SKIP}," == *",$fn,"* ]]; then
    say "=== $name: skipped (GPU_CHECK_SKIP)"
    SUMMARY+=("$name: skipped (GPU_CHECK_SKIP)")
    return 0
  fi
  say "=== $name (timeout ${limit}s)"
  local t0=$SECONDS
  export -f "$fn"
  export ROOT BIN TESSERA PY WORK LOG_DIR MODELS_DIR INPUTS_DIR HAVE_GPU
  timeout --kill-after=10 "$limit" bash -c "set -o pipefail; $fn"
  local rc=$?
  local what="ok"
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then what="TIMED OUT after ${limit}s"
  elif [[ $rc -eq 77 ]]; then what="skipped"
  elif [[ $rc -ne 0 ]]; then what="FAILED (exit $rc)"; fi
  say "=== $name: $what in $((SECONDS - t0))s"
  SUMMARY+=("$name: $what")
  return 0
}

# ---- binaries ----
if [[ -n "$PREBUILT" ]]; then
  PREBUILT="$(cd "$PREBUILT" && pwd)"
  BIN="$PREBUILT/bin"
  export LD_LIBRARY_PATH="$PREBUILT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  MODELS_DIR="$PREBUILT/models"
  INPUTS_DIR="$PREBUILT/models/inputs"
  [[ -f "$PREBUILT/MANIFEST" ]] && { say "prebuilt: $(head -2 "$PREBUILT/MANIFEST" | tr '\n' ';')"; }
else
  BUILD="$ROOT/build_gpu"
  say "building in $BUILD (Release, CUDA on)"
  if cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTESSERA_WITH_CUDA=ON -DTESSERA_ASAN_TESTS=OFF \
       > "$LOG_DIR/configure.log" 2>&1 &&
     make -C "$BUILD" -j"$(nproc)" tessera tessera_cuda_tests tessera_nccl_tests > "$LOG_DIR/build.log" 2>&1; then
    say "build ok"
  else
    say "build FAILED (see $LOG_DIR/configure.log, build.log):"; tail -n 15 "$LOG_DIR/build.log" 2>/dev/null
  fi
  BIN="$BUILD"
  for t in tessera_cuda_tests tessera_nccl_tests; do
    [[ -x "$BUILD/tests/$t" ]] && ln -sf "$BUILD/tests/$t" "$BUILD/$t"
  done
  MODELS_DIR="${MODELS_DIR:-$ROOT/build/models}"
  INPUTS_DIR="${INPUTS_DIR:-}"
fi
TESSERA="$BIN/tessera"

# cuBLAS / cuDNN (dlopen'ed by the CUDA backend): the system's, else the toolkit's, else a pip
# wheel's (PyTorch's nvidia-* packages).
add_lib_dir() { case ":${LD_LIBRARY_PATH:-}:" in *":$1:"*) ;; *) export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$1" ;; esac; }
SITE_DIRS="$("$PY" -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)"
for lib in libcublas.so.13 libcublasLt.so.13 libcudnn.so.9 libnccl.so.2; do
  found=""
  for d in ${LD_LIBRARY_PATH//:/ }; do [[ -e "$d/$lib" ]] && found="$d/$lib" && break; done
  [[ -z "$found" ]] && ldconfig -p 2>/dev/null | grep -q " $lib " && found="(system)"
  if [[ -z "$found" ]]; then
    for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
      [[ -e "$d/$lib" ]] && { add_lib_dir "$d"; found="$d/$lib"; break; }
    done
  fi
  if [[ -z "$found" ]]; then
    for sp in $SITE_DIRS; do
      f="$(find "$sp/nvidia" -maxdepth 4 -name "$lib" 2>/dev/null | head -1)"
      [[ -n "$f" ]] && { add_lib_dir "$(dirname "$f")"; found="$f"; break; }
    done
  fi
  say "$lib: ${found:-NOT FOUND (the CUDA backend will report it and fall back to the CPU)}"
done
# Belt and braces: Tessera keeps TF32 off by itself; this also rules it out inside the libraries.
export NVIDIA_TF32_OVERRIDE=0

HAVE_GPU=0
# ---- 1. facts ----
facts() {
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm --format=csv || nvidia-smi
  else
    echo "nvidia-smi not found: no NVIDIA driver here"
  fi
  command -v nvcc >/dev/null && nvcc --version | tail -2
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  if [[ -x "$TESSERA" ]]; then
    ldd "$TESSERA" | grep -E "onnx|not found" || true
    "$TESSERA" --version 2>/dev/null || true
  else
    echo "no tessera binary at $TESSERA"
  fi
  "$PY" -c 'import sys, numpy, onnx; print("python", sys.version.split()[0], "numpy", numpy.__version__, "onnx", onnx.__version__)' || true
  "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "device:", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")' 2>/dev/null || echo "torch: not importable"
}
stage "facts" 30 facts

# Is there a device Tessera can use? (tessera run on a tiny model says so in its notes.)
HAVE_GPU=0
if [[ -x "$BIN/tessera_cuda_tests" ]]; then
  probe="$("$BIN/tessera_cuda_tests" --gtest_filter='CudaOps.ShapeOpsAreDeviceCopies' 2>&1)"
  if grep -q "no CUDA device" <<<"$probe"; then
    say "no CUDA device: $(grep -m1 -o 'no CUDA device.*' <<<"$probe")"
  elif grep -q "PASSED\|FAILED" <<<"$probe"; then
    HAVE_GPU=1
  else
    say "the CUDA test binary did not start: $(tail -n 3 <<<"$probe")"
  fi
fi

# ---- 2. CUDA unit tests ----
unit_tests() {
  [[ -x "$BIN/tessera_cuda_tests" ]] || { echo "no $BIN/tessera_cuda_tests"; return 1; }
  "$BIN/tessera_cuda_tests" --gtest_brief=1 2>&1 | tail -n 60
  local rc="${PIPESTATUS[0]}"
  # Without a device every test skips (gtest exits 0): report the stage as skipped.
  [[ $rc -eq 0 && $HAVE_GPU -ne 1 ]] && return 77
  return "$rc"
}
stage "CUDA unit tests" 90 unit_tests

# ---- 2b. the NCCL communicator, world size 1 (train/comm) ----
nccl_tests() {
  [[ -x "$BIN/tessera_nccl_tests" ]] || { echo "no $BIN/tessera_nccl_tests (built only with NCCL)"; return 1; }
  "$BIN/tessera_nccl_tests" --gtest_brief=1 2>&1 | tail -n 20
  local rc="${PIPESTATUS[0]}"
  [[ $rc -eq 0 && $HAVE_GPU -ne 1 ]] && return 77
  return "$rc"
}
stage "NCCL communicator (world size 1)" 30 nccl_tests

# ---- 3. conformance with --backend cuda ----
conformance() {
  [[ $HAVE_GPU -eq 1 ]] || { echo "no CUDA device: the CUDA conformance run needs one"; return 77; }
  # The node tests packed by gpu_pack.sh, else those of this Python's onnx package.
  local data=()
  if [[ -f "$MODELS_DIR/node_tests.tar.xz" ]]; then
    mkdir -p "$WORK/node_tests" && tar -C "$WORK/node_tests" -xJf "$MODELS_DIR/node_tests.tar.xz" &&
      data=(--data-dir "$WORK/node_tests/node") && echo "node tests: $(ls "$WORK/node_tests/node" | wc -l) (packed)"
  fi
  # Only the tests of ops the CUDA backend has kernels for (the op table of backends/cuda/
  # blas.cc, conv.cc, ops.cc): the others run wholly on the CPU, which CI's conformance run
  # covers, and each test pays a CUDA start-up of about a second.
  local ops="MatMul,Gemm,Conv,Reshape,Flatten,Squeeze,Unsqueeze,Identity,Dropout,Transpose,Slice,Expand,Concat,Split"
  ops+=",Gather,Add,Sub,Mul,Div,Pow,PRelu,Relu,LeakyRelu,Elu,Selu,Sigmoid,HardSigmoid,HardSwish,Tanh,Softplus"
  ops+=",Softsign,Gelu,Erf,Exp,Log,Sqrt,Reciprocal,Abs,Neg,Floor,Ceil,Sin,Cos,Mish,Clip,Softmax,LogSoftmax"
  ops+=",LayerNormalization,ReduceSum,ReduceMean,GlobalAveragePool,BatchNormalization,MaxPool,AveragePool,Resize,Upsample"
  "$PY" tests/conformance/run_node_tests.py --tessera "$TESSERA" --backend cuda --jobs "$(nproc)" "${data[@]}" --ops "$ops" \
    --time-limit "${CONFORMANCE_SECONDS:-100}" --work-dir "$WORK/conformance" \
    --json-out "$LOG_DIR/conformance_cuda.json" --md-out "$LOG_DIR/conformance_cuda.md" | tail -n 8
}
stage "conformance (cuda)" $(( ${CONFORMANCE_SECONDS:-100} + 30 )) conformance

# ---- 4. real models: CUDA vs CPU ----
models() {
  [[ $HAVE_GPU -eq 1 ]] || { echo "no CUDA device: the real-model comparison needs one"; return 77; }
  "$PY" scripts/gpu_models_check.py --tessera "$TESSERA" --models-dir "$MODELS_DIR" \
    ${INPUTS_DIR:+--inputs-dir "$INPUTS_DIR"} --work "$WORK/models" --timeout 40 | tee "$LOG_DIR/real_models_cuda.md"
  return "${PIPESTATUS[0]}"
}
stage "real models (cuda vs cpu)" 60 models

# ---- 5. benchmark vs PyTorch ----
bench() {
  [[ $HAVE_GPU -eq 1 ]] || { echo "no CUDA device: the benchmark needs one"; return 77; }
  "$PY" bench/gpu_vs_torch.py --tessera "$TESSERA" --work "$WORK/bench" --runs "${BENCH_RUNS:-15}" --warmup 3 \
    --md-out "$LOG_DIR/bench_cuda_vs_torch.md"
}
stage "benchmark (ResNet-50, BERT; batch 1, 32) vs PyTorch" 120 bench

# ---- 6. Vulkan on the same GPU (NVIDIA's Vulkan driver): its tests and its benchmark ----
vulkan() {
  [[ -x "$BIN/tessera_vulkan_tests" ]] || { echo "no $BIN/tessera_vulkan_tests (built without Vulkan)"; return 77; }
  # The Vulkan loader: the system's, else the packages carried in .gl/ (see the device notes:
  # libvulkan1 and friends, unpacked into /).
  if ! ldconfig -p 2>/dev/null | grep -q "libvulkan.so.1 "; then
    if compgen -G "$ROOT/.gl/*.deb" > /dev/null; then
      for f in "$ROOT"/.gl/*.deb; do dpkg -x "$f" /; done
      ldconfig
      echo "Vulkan loader unpacked from .gl/"
    fi
  fi
  if [[ -z "${VK_DRIVER_FILES:-}" && -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  fi
  local out rc
  out="$("$BIN/tessera_vulkan_tests" --gtest_brief=1 2>&1)"
  rc=$?
  tail -n 30 <<<"$out"
  # Every test skipped (no loader or no device): report the stage as skipped, and do not
  # time a "Vulkan" run that would be the CPU's.
  if [[ $rc -eq 0 ]] && grep -q "PASSED  \] 0 tests" <<<"$out"; then
    echo "the Vulkan tests all skipped: $(grep -m1 -o "no Vulkan device.*" <<<"$out")"
    return 77
  fi
  "$PY" bench/vulkan_vs_cpu.py --tessera "$TESSERA" --work "$WORK/vulkan" --models-dir "$MODELS_DIR" \
    --runs "${BENCH_RUNS:-15}" --warmup 3 --md-out "$LOG_DIR/bench_vulkan_vs_cpu.md" | tail -n 14
  local brc="${PIPESTATUS[0]}"
  [[ $rc -ne 0 ]] && return "$rc"
  return "$brc"
}
stage "Vulkan tests and benchmark (NVIDIA driver)" 150 vulkan

say "summary ($((SECONDS - START)) s):"
for s in "${SUMMARY[@]}"; do say "  $s"; done
rm -rf "$WORK"
exit 0
