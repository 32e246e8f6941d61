#!/usr/bin/env bash
# Installs what Tessera needs to build and test on Debian 12, and nothing that is already
# there: the Debian packages (checked one by one with dpkg; `apt-get update` runs only when
# something is missing), then a Python virtual environment at ${BUILD_DIR:-build}/venv with
# the pinned packages of scripts/requirements.txt (pip runs only when requirements.txt
# changed since the last install: a stamp file in the venv holds its sha256).
#
# Usage: bash scripts/install_deps.sh        (as root, or as a user with sudo)
# Env:   BUILD_DIR  build folder, relative to the repository root or absolute (default build)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-build}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
VENV="$BUILD_DIR/venv"
REQS="$ROOT/scripts/requirements.txt"

step() { echo "[install_deps] $*"; }

# ---- Debian packages ----
PACKAGES=(
  build-essential cmake pkg-config ccache git python3 python3-venv unzip
  flatbuffers-compiler libflatbuffers-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libcli11-dev libgtest-dev libxxhash-dev
  libopenmpi-dev openmpi-bin
  # The Vulkan backend: headers, the shader compiler (build time) and Mesa's drivers, whose
  # CPU driver lavapipe ("llvmpipe") runs the Vulkan tests on machines without a GPU.
  libvulkan-dev glslc mesa-vulkan-drivers
)
# shellcheck source=scripts/apt_ensure.sh
source "$ROOT/scripts/apt_ensure.sh"
apt_ensure install_deps "${PACKAGES[@]}"

# ---- Python virtual environment ----
want_stamp="$(sha256sum "$REQS" | cut -d' ' -f1) $(/usr/bin/python3 -c 'import sys; print(sys.version.split()[0])')"
stamp_file="$VENV/.tessera-requirements.stamp"
if [[ -x "$VENV/bin/python" && -f "$stamp_file" && "$(cat "$stamp_file")" == "$want_stamp" ]]; then
  step "venv $VENV: up to date"
  exit 0
fi
if [[ ! -x "$VENV/bin/python" ]]; then
  step "create venv $VENV"
  mkdir -p "$BUILD_DIR"
  /usr/bin/python3 -m venv "$VENV"
fi
step "pip install -r scripts/requirements.txt into $VENV"
rm -f "$stamp_file"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input -r "$REQS"
echo "$want_stamp" > "$stamp_file"
step "venv $VENV: ready"
