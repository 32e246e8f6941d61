#!/usr/bin/env bash
# The main job: builds Tessera, converts the four real trained models (PP-OCRv4 detection,
# recognition, direction classifier; Silero VAD) to .tsr, runs each on real input with
# Tessera and with onnxruntime, and prints one markdown table (model, nodes, max abs
# difference, relative error, Tessera and onnxruntime median ms, pass/fail against
# rel error <= 1e-4). Exits non-zero when a step fails or a model misses the bound.
#
# Usage: bash scripts/demo.sh
# Env:   TESSERA_DEMO_RUNS    timed runs per model for both runtimes (default 10)
#        TESSERA_DEMO_THREADS threads for both runtimes (default 1)
#        TESSERA_BIN          use this tessera binary and build nothing
#        TESSERA_JOBS         parallel build jobs (default: nproc)
#        BUILD_DIR            build folder (default build, relative to the repository root)
# Everything lands in build/: venv/, models/, demo/ (inputs, .tsr files, outputs, logs).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
export BUILD_DIR
# ccache keys on paths relative to the repository, so clones in other folders share hits.
export CCACHE_BASEDIR="$ROOT"
JOBS="${TESSERA_JOBS:-$(nproc)}"
PY="$BUILD_DIR/venv/bin/python"
DEMO="$BUILD_DIR/demo"
RUNS="${TESSERA_DEMO_RUNS:-10}"
THREADS="${TESSERA_DEMO_THREADS:-1}"
TOL=1e-4

step() { echo "[demo] $*"; }
# run_logged LOG CMD...: runs CMD with its output in LOG; on failure shows the end of LOG.
run_logged() {
  local log="$1"; shift
  if ! "$@" >"$log" 2>&1; then
    echo "[demo] error: failed: $*" >&2
    echo "[demo] last lines of $log:" >&2
    tail -n 30 "$log" | sed 's/^/    /' >&2
    return 1
  fi
}
# run_stdout OUT LOG CMD...: as run_logged, but CMD's standard output goes to OUT alone.
run_stdout() {
  local out="$1" log="$2"; shift 2
  if ! "$@" >"$out" 2>"$log"; then
    echo "[demo] error: failed: $*" >&2
    echo "[demo] last lines of its output:" >&2
    cat "$out" "$log" | tail -n 30 | sed 's/^/    /' >&2
    return 1
  fi
}

bash scripts/install_deps.sh
rm -rf "$DEMO"
mkdir -p "$DEMO/logs"

if [[ -z "${TESSERA_BIN:-}" ]]; then
  step "configure build/ (cmake, Release)"
  run_logged "$DEMO/logs/configure.log" cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
  step "build tessera (make -j$JOBS)"
  run_logged "$DEMO/logs/build.log" make -C "$BUILD_DIR" -j"$JOBS" tessera
fi

TESSERA="${TESSERA_BIN:-}"
if [[ -z "$TESSERA" ]]; then
  for candidate in "$BUILD_DIR/tessera" "$BUILD_DIR/apps/tessera/tessera" "$BUILD_DIR/bin/tessera"; do
    if [[ -x "$candidate" ]]; then TESSERA="$candidate"; break; fi
  done
fi
if [[ -z "$TESSERA" ]]; then
  echo "[demo] error: the build made no tessera binary under $BUILD_DIR" >&2
  exit 1
fi
step "tessera: $TESSERA ($("$TESSERA" --version 2>&1 | head -n 1))"

bash scripts/fetch_models.sh
step "prepare inputs (scikit-learn's sample photograph; 1 s of audio-like signal)"
run_logged "$DEMO/logs/prepare_inputs.log" "$PY" scripts/demo/prepare_inputs.py --out "$DEMO/inputs"

# demo_model NAME: convert, inspect, run, bench and compare one model; the step that fails
# is written to $DEMO/NAME/failed. (Explicit checks: `set -e` does not act inside a function
# called from a condition.)
demo_model() {
  local m="$1" onnx tsr dir args=()
  onnx="$BUILD_DIR/models/$("$PY" -c "import sys; sys.path.insert(0, 'scripts/demo'); from real_models import onnx_file; print(onnx_file('$m'))")"
  dir="$DEMO/$m"
  tsr="$dir/$m.tsr"
  mkdir -p "$dir/out"
  mapfile -t args < "$DEMO/inputs/$m/args.txt"   # --input NAME=FILE pairs, one token a line
  fail() { echo "$1" > "$dir/failed"; return 1; }

  step "$m: convert ${onnx##*/}"
  run_logged "$dir/convert.log" "$TESSERA" convert "$onnx" -o "$tsr" || { fail convert; return 1; }
  step "$m: inspect"
  run_stdout "$dir/inspect.json" "$dir/inspect.log" "$TESSERA" inspect "$tsr" --json \
    || { fail inspect; return 1; }
  step "$m: run"
  run_logged "$dir/run.log" "$TESSERA" run "$tsr" "${args[@]}" --output-dir "$dir/out" \
    || { fail run; return 1; }
  step "$m: bench (--threads $THREADS --runs $RUNS)"
  run_stdout "$dir/bench.out" "$dir/bench.log" "$TESSERA" bench "$tsr" "${args[@]}" \
    --threads "$THREADS" --runs "$RUNS" --json || { fail bench; return 1; }
  tail -n 1 "$dir/bench.out" > "$dir/bench.json"   # its last line is the JSON result
  step "$m: onnxruntime and compare"
  run_logged "$dir/compare.log" "$PY" scripts/demo/compare.py "$onnx" "${args[@]}" \
    --tessera-dir "$dir/out" --threads "$THREADS" --runs "$RUNS" --json-out "$dir/compare.json" \
    || { fail compare; return 1; }
  sed -n 's/^worst: /    /p' "$dir/compare.log"
  if [[ "$m" == rec ]]; then   # what Tessera's output says: the caption on the photograph
    "$PY" scripts/demo/ctc_decode.py "$dir"/out/*.npy "$onnx" | sed 's/^/    Tessera /' | tee "$dir/text.txt"
  fi
}

read -ra MODELS <<< "$("$PY" scripts/demo/real_models.py names)"
for m in "${MODELS[@]}"; do
  demo_model "$m" || step "$m: FAILED at $(cat "$DEMO/$m/failed")"
done

echo
"$PY" scripts/demo/report.py "$DEMO" --models "${MODELS[@]}" --tol "$TOL" --threads "$THREADS" \
  --runs "$RUNS" | tee "$DEMO/table.md"
exit "${PIPESTATUS[0]}"
