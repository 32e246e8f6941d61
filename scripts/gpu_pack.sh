#!/usr/bin/env bash
# Builds what scripts/gpu_check.sh needs on a machine WITHOUT a GPU (with the CUDA toolkit
# and Tessera's build dependencies) and packs it into .devbuild/ at the repository root, to
# be carried to a GPU machine that cannot build Tessera itself (no FlatBuffers / ONNX dev
# packages there). .devbuild/ is git-ignored (.git/info/exclude).
#
#   bash scripts/gpu_pack.sh            then, on the GPU machine:
#   bash scripts/gpu_check.sh --prebuilt .devbuild
#
# .devbuild/ holds:
#   bin/      tessera (CLI), tessera_cuda_tests, tessera_nccl_tests (and tessera_vulkan_tests when
#             Vulkan is built), Release, CUDA on (sm_80, sm_90 + PTX), stripped
#   lib/      libonnx.so.1 and libonnx_proto.so.1 (the converter's ONNX 1.12 library; the
#             GPU machine's glibc/libstdc++ are newer, so a Debian 12 binary runs there).
#             cuBLAS, cuDNN and the driver come from the GPU machine (gpu_check.sh finds them).
#   models/   the four demo models (.onnx) and their real inputs (.npy, scripts/demo/prepare_inputs.py),
#             node_tests.tar.xz: the ONNX node tests of this machine's onnx package
#   MANIFEST  the commit, build flags and file sizes
# Env: BUILD_DIR (default build_gpu_pack, relative to the repository root), TESSERA_JOBS
# (default nproc), MODELS_DIR (where the four .onnx files are; default: searched),
# PYTHON (a Python with numpy, scikit-learn and Pillow for the inputs; default: searched).
# The total must stay well under the 64 MiB that travels with the working tree (56 MiB here).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build_gpu_pack}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
JOBS="${TESSERA_JOBS:-$(nproc)}"
OUT="$ROOT/.devbuild"
step() { echo "[gpu_pack] $*"; }
die() { echo "[gpu_pack] error: $*" >&2; exit 1; }
export CCACHE_BASEDIR="$ROOT"

command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]] || die "nvcc not found (install the CUDA toolkit)"

step "configure $BUILD_DIR (Release, CUDA on, tests on, no ASan copy)"
# -U: the optional backends' defaults are found again (a cache from before their packages were
# installed would keep them off).
cmake -S "$ROOT" -B "$BUILD_DIR" -UTESSERA_WITH_VULKAN -UTESSERA_WITH_MPI -DCMAKE_BUILD_TYPE=Release -DTESSERA_WITH_CUDA=ON -DTESSERA_BUILD_TESTS=ON \
  -DTESSERA_ASAN_TESTS=OFF > "$BUILD_DIR.configure.log" 2>&1 || { tail -n 30 "$BUILD_DIR.configure.log" >&2; exit 1; }
grep -E "Tessera: CUDA backend" "$BUILD_DIR.configure.log" || die "the CUDA backend is not configured (see $BUILD_DIR.configure.log)"
step "build tessera tessera_cuda_tests tessera_nccl_tests (make -j$JOBS)"
make -C "$BUILD_DIR" -j"$JOBS" --no-print-directory tessera tessera_cuda_tests tessera_nccl_tests 2>&1 |
  grep -E "error|warning: unused|Linking|Built target" || true
[[ -x "$BUILD_DIR/tessera" && -x "$BUILD_DIR/tests/tessera_cuda_tests" && -x "$BUILD_DIR/tests/tessera_nccl_tests" ]] ||
  die "the build failed (run make -C $BUILD_DIR tessera tessera_cuda_tests tessera_nccl_tests)"
# The Vulkan tests too, when this build has the Vulkan backend (gpu_check runs them on the
# GPU's own Vulkan driver).
if grep -q "Tessera: Vulkan backend" "$BUILD_DIR.configure.log"; then
  make -C "$BUILD_DIR" -j"$JOBS" --no-print-directory tessera_vulkan_tests 2>&1 | grep -E "error|Built target" || true
fi

step "assemble $OUT"
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/models"
cp "$BUILD_DIR/tessera" "$BUILD_DIR/tests/tessera_cuda_tests" "$BUILD_DIR/tests/tessera_nccl_tests" "$OUT/bin/"
[[ -x "$BUILD_DIR/tests/tessera_vulkan_tests" ]] && cp "$BUILD_DIR/tests/tessera_vulkan_tests" "$OUT/bin/"
strip "$OUT/bin/"*
for l in libonnx.so.1 libonnx_proto.so.1; do
  f="$(ldconfig -p | awk -v l="$l" '$1 == l {print $NF; exit}')"
  [[ -n "$f" ]] || die "$l not found (libonnx-dev)"
  cp -L "$f" "$OUT/lib/$l"
done

# The four demo models.
if [[ -z "${MODELS_DIR:-}" ]]; then
  for d in "$ROOT/build/models" /work/build/models /tmp/newuser_clone/build/models; do
    if [[ -f "$d/silero_vad.onnx" ]]; then MODELS_DIR="$d"; break; fi
  done
fi
if [[ -n "${MODELS_DIR:-}" ]]; then
  for f in ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx silero_vad.onnx; do
    [[ -f "$MODELS_DIR/$f" ]] && cp "$MODELS_DIR/$f" "$OUT/models/" || step "missing $MODELS_DIR/$f"
  done
else
  step "no demo models found (run scripts/fetch_models.sh or set MODELS_DIR); the real-model stage will be skipped"
fi

# Their real inputs (the photograph needs scikit-learn and Pillow, which the GPU machine lacks).
if [[ -z "${PYTHON:-}" ]]; then
  for p in "$ROOT/build/venv/bin/python" /work/build/venv/bin/python /tmp/newuser_clone/build/venv/bin/python python3; do
    if "$p" -c "import numpy, sklearn, PIL" 2>/dev/null; then PYTHON="$p"; break; fi
  done
fi
if [[ -n "${PYTHON:-}" ]]; then
  "$PYTHON" scripts/demo/prepare_inputs.py --out "$OUT/models/inputs" > /dev/null
  # args.txt holds absolute paths of this machine: gpu_check.sh rebuilds them.
  rm -f "$OUT"/models/inputs/*/args.txt
else
  step "no Python with numpy, scikit-learn and Pillow: the real-model stage will use random inputs"
fi

# The ONNX node tests for the conformance stage (the GPU machine's onnx wheel may lack them):
# those of the Python with onnx used above, as one .tar.xz (about 2 MiB).
for p in ${PYTHON:-} "$ROOT/build/venv/bin/python" /work/build/venv/bin/python python3; do
  node_dir="$("$p" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/node"))' 2>/dev/null)" || continue
  if [[ -d "$node_dir" ]]; then
    tar -C "$(dirname "$node_dir")" -cJf "$OUT/models/node_tests.tar.xz" node
    step "node tests: $(ls "$node_dir" | wc -l) from $node_dir"
    break
  fi
done
[[ -f "$OUT/models/node_tests.tar.xz" ]] || step "no ONNX node tests found: the conformance stage will use the GPU machine's onnx, if it has them"

{
  echo "commit $(git -C "$ROOT" rev-parse HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . ':!.devbuild' || echo ' (with uncommitted changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release; echo "$PRETTY_NAME"), $(nvcc --version 2>/dev/null | tail -1)"
  grep -E "CMAKE_BUILD_TYPE:" "$BUILD_DIR/CMakeCache.txt"
  grep -E "Tessera: CUDA backend" "$BUILD_DIR.configure.log"
  (cd "$OUT" && find . -type f -printf '%s %p\n' | sort -k2)
} > "$OUT/MANIFEST"
total=$(du -sb "$OUT" | cut -f1)
step "$(find "$OUT" -type f | wc -l) files, $((total / 1048576)) MiB in $OUT"
(( total < 56 * 1048576 )) || die "$OUT is $((total / 1048576)) MiB; it must stay under 56 MiB (64 MiB travel in all)"
step "done; on the GPU machine: bash scripts/gpu_check.sh --prebuilt .devbuild"
