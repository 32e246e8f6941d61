#!/usr/bin/env bash
# Runs all of Tessera's tests: installs what is missing (scripts/install_deps.sh), fetches
# the real models the end-to-end tests need, configures build/ with the tests on, builds
# everything and runs ctest. Exits non-zero when anything fails.
#
# Usage: bash scripts/test.sh [extra ctest arguments, e.g. -L e2e or -R Reader]
# Env:   TESSERA_JOBS  parallel build and test jobs (default: nproc)
#        BUILD_DIR     build folder (default build, relative to the repository root)
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
cd "$BUILD_DIR"
ctest --output-on-failure -j"$JOBS" "$@"
# The ONNX conformance summary (ctest shows a passing test's output only on failure).
if [[ -f conformance/cpu.md ]]; then
  step "$(sed -n 3p conformance/cpu.md)"
fi
step "done in $((SECONDS - start)) s"
