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
)
missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  SUDO=()
  if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null; then SUDO=(sudo); else
      echo "[install_deps] error: missing packages (${missing[*]}) and not root, no sudo" >&2
      exit 1
    fi
  fi
  step "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq >/dev/null
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  step "Debian packages: all ${#PACKAGES[@]} present"
fi

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
