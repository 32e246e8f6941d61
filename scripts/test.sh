#!/usr/bin/env bash
# Runs all of Tessera's tests: installs what is missing (scripts/install_deps.sh), fetches
# the real models the end-to-end tests need, configures build/ with the tests on, builds
# everything and runs ctest. Exits non-zero when anything fails.
#
# Then the ARM stage: scripts/cross_build_arm64.sh --test cross-builds for aarch64 and runs
# the CPU kernel tests and the PP-OCR direction classifier under qemu-aarch64 (against this
# build's x86 output). It runs even when the x86 tests failed; either failing fails the script.
#
# Usage: bash scripts/test.sh [extra ctest arguments, e.g. -L e2e or -R Reader]
# Env:   TESSERA_JOBS  parallel build and test jobs (default: nproc)
#        BUILD_DIR     build folder (default build, relative to the repository root)
#        TESSERA_ARM   1: run the ARM stage, 0: skip it; default: run it unless extra ctest
#                      arguments select a subset of the x86 tests
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
export BUILD_DIR
# ccache keys on paths relative to the repository, so clones in other folders share hits.
export CCACHE_BASEDIR="$ROOT"
JOBS="${TESSERA_JOBS:-$(nproc)}"
step() { echo "[test] $*"; }
start=$SECONDS

bash scripts/install_deps.sh
bash scripts/fetch_models.sh

step "configure $BUILD_DIR (Release, tests on)"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DTESSERA_BUILD_TESTS=ON \
  -DTESSERA_PYTHON="$BUILD_DIR/venv/bin/python" -DTESSERA_MODELS_DIR="$BUILD_DIR/models" \
  > "$BUILD_DIR/configure.log" 2>&1 || { tail -n 40 "$BUILD_DIR/configure.log" >&2; exit 1; }
step "build (make -j$JOBS)"
make -C "$BUILD_DIR" -j"$JOBS" --no-print-directory

step "ctest (-j$JOBS)"
x86_rc=0
(cd "$BUILD_DIR" && ctest --output-on-failure -j"$JOBS" "$@") || x86_rc=$?
# The ONNX conformance summary (ctest shows a passing test's output only on failure).
for backend in cpu vulkan; do
  if [[ -f "$BUILD_DIR/conformance/$backend.md" ]]; then
    step "$(sed -n 3p "$BUILD_DIR/conformance/$backend.md")"
  fi
done
step "x86 tests done in $((SECONDS - start)) s (ctest exit $x86_rc)"

arm_rc=0
if [[ "${TESSERA_ARM:-}" == 1 || ( -z "${TESSERA_ARM:-}" && $# -eq 0 ) ]]; then
  arm_start=$SECONDS
  step "ARM stage: aarch64 cross build, kernel tests and the cls model under qemu-aarch64"
  bash scripts/cross_build_arm64.sh --test || arm_rc=$?
  step "ARM stage done in $((SECONDS - arm_start)) s (exit $arm_rc)"
else
  step "ARM stage skipped (TESSERA_ARM=${TESSERA_ARM:-} with ctest arguments: $*)"
fi
step "done in $((SECONDS - start)) s"
if ((x86_rc != 0 || arm_rc != 0)); then
  echo "[test] FAILED: x86 ctest exit $x86_rc, ARM stage exit $arm_rc" >&2
  exit 1
fi
