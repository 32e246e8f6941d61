#!/usr/bin/env bash
# Cross-builds Tessera for 64-bit ARM Linux (aarch64) with Debian's g++-aarch64-linux-gnu,
# and with --test runs its checks under QEMU user-mode emulation (qemu-aarch64):
#   - the CPU kernel unit tests (tests/CMakeLists.txt: TSR_KERNEL_TEST_SOURCES): SGEMM with
#     its NEON micro-kernel, MatMul, Gemm, Conv, the thread pool, each against the reference
#     kernels over many shapes;
#   - one real model: the PP-OCR direction classifier converted by the host's tessera, run by
#     the aarch64 tessera and by the host's, outputs compared (tests/arm/model_vs_host.py);
#   - the C API suites (tests/unit/c_api_test.cc, ctest CApi.*);
#   - the C API: the minimal libtessera installed into a temporary prefix, the C example
#     (apps/examples/c) cross-built against it (find_package shared and static, pkg-config)
#     and run on the same model, compared with the host's `tessera run`
#     (tests/e2e/c_example_test.py, ctest arm.c_example).
# What is built: the runtime without the converter (TESSERA_MINIMAL: no protobuf, no ONNX
# library for aarch64), the `tessera` CLI (run, bench, inspect), the C library
# (libtessera.so, libtessera.a) and the kernel tests, into
# ${BUILD_DIR_ARM:-build-arm64}, with cmake/toolchains/aarch64-linux-gnu.cmake. FlatBuffers,
# xxHash and CLI11 are used header-only from the host; GoogleTest is built from
# /usr/src/googletest; flatc runs on the host.
#
# Missing Debian packages (the cross compiler, qemu-user, and the host headers) are installed
# with apt-get (each checked with dpkg first). When they cannot be, the script says so and
# exits non-zero: the ARM stage fails, it never passes without running.
#
# Usage: bash scripts/cross_build_arm64.sh [--test] [extra ctest arguments]
# Env:   BUILD_DIR_ARM  aarch64 build folder (default build-arm64, relative to the repository root)
#        BUILD_DIR      host build folder with the full tessera CLI, build/venv and build/models
#                       (default build); --test needs its tessera (scripts/test.sh builds it first)
#        TESSERA_JOBS   parallel build and test jobs (default: nproc)
#        TESSERA_SIZE_OPT  ON (default): the runtime built for size, SIMD kernels excepted
#        TESSERA_HOST_PYTHON, TESSERA_MODELS_DIR  the venv Python and the models folder
#                       (default: $BUILD_DIR/venv/bin/python and $BUILD_DIR/models)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
abs() { case "$1" in /*) echo "$1" ;; *) echo "$ROOT/$1" ;; esac; }
BUILD_DIR_ARM="$(abs "${BUILD_DIR_ARM:-build-arm64}")"
HOST_BUILD="$(abs "${BUILD_DIR:-build}")"
JOBS="${TESSERA_JOBS:-$(nproc)}"
export CCACHE_BASEDIR="$ROOT"
step() { echo "[cross_build_arm64] $*"; }
die() { echo "[cross_build_arm64] error: $*" >&2; exit 1; }
start=$SECONDS

RUN_TESTS=0
if [[ "${1:-}" == "--test" ]]; then RUN_TESTS=1; shift; fi

# ---- Debian packages: the cross toolchain, QEMU, and the host tools and headers ----
PACKAGES=(
  g++-aarch64-linux-gnu qemu-user
  cmake make ccache flatbuffers-compiler libflatbuffers-dev libxxhash-dev libcli11-dev libgtest-dev
)
# shellcheck source=scripts/apt_ensure.sh
source "$ROOT/scripts/apt_ensure.sh"
apt_ensure cross_build_arm64 "${PACKAGES[@]}" || die "the packages above are needed: no ARM cross build, no ARM tests"
command -v aarch64-linux-gnu-g++ >/dev/null || die "aarch64-linux-gnu-g++ not found after installing g++-aarch64-linux-gnu"
command -v qemu-aarch64 >/dev/null || die "qemu-aarch64 not found after installing qemu-user"

# ---- configure and build ----
cmake_args=(
  -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchains/aarch64-linux-gnu.cmake"
  -DCMAKE_BUILD_TYPE=Release -DTESSERA_MINIMAL=ON -DTESSERA_BUILD_TESTS=ON -DTESSERA_KERNEL_TESTS_ONLY=ON
  -DTESSERA_WITH_CUDA=OFF -DTESSERA_WITH_VULKAN=OFF -DTESSERA_WITH_MPI=OFF -DTESSERA_ASAN_TESTS=OFF
  # The embedded configuration: -Os outside the SIMD kernels (a 1.2 MB libtessera.so
  # instead of 2.1 MB; bench/c_api_size.sh), so the tests below run what a board gets.
  -DTESSERA_SIZE_OPT="${TESSERA_SIZE_OPT:-ON}"
)
# The real-model check needs the host's full CLI (it converts), the venv and the models.
if [[ -x "$HOST_BUILD/tessera" ]]; then
  cmake_args+=(-DTESSERA_HOST_TESSERA="$HOST_BUILD/tessera"
               -DTESSERA_HOST_PYTHON="${TESSERA_HOST_PYTHON:-$HOST_BUILD/venv/bin/python}"
               -DTESSERA_MODELS_DIR="${TESSERA_MODELS_DIR:-$HOST_BUILD/models}")
elif ((RUN_TESTS)); then
  die "no host tessera at $HOST_BUILD/tessera for the real-model check; build it first (scripts/test.sh does), or set BUILD_DIR"
fi
mkdir -p "$BUILD_DIR_ARM"
step "configure $BUILD_DIR_ARM (aarch64, Release, runtime without the converter)"
cmake -S . -B "$BUILD_DIR_ARM" "${cmake_args[@]}" > "$BUILD_DIR_ARM/configure.log" 2>&1 ||
  { tail -n 40 "$BUILD_DIR_ARM/configure.log" >&2; die "configure failed (log: $BUILD_DIR_ARM/configure.log)"; }
step "build tessera, libtessera, tessera_kernel_tests and tessera_c_api_tests for aarch64 (make -j$JOBS)"
make -C "$BUILD_DIR_ARM" -j"$JOBS" --no-print-directory tessera tessera_c_shared tessera_c_static tessera_kernel_tests tessera_c_api_tests
step "built in $((SECONDS - start)) s"

if ((RUN_TESTS)); then
  step "ctest under qemu-aarch64 (-j$JOBS)"
  cd "$BUILD_DIR_ARM"
  # --no-tests=error: an empty test list (e.g. discovery failed) is a failure, not a pass.
  ctest --output-on-failure --no-tests=error -j"$JOBS" "$@"
fi
step "done in $((SECONDS - start)) s"
