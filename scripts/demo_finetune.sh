#!/usr/bin/env bash
# The fine-tuning demo: builds tessera and tessera-finetune, builds a small CNN as ONNX
# (apps/finetune/examples/digits_cnn.py, onnx.helper) with scikit-learn's digits split
# 1437/360 (fixed, stratified, seed 0), converts it, trains it (SGD, momentum 0.9, cosine
# schedule, 20 epochs, batch 32), prints the held-out accuracy and the wall time, exports
# the trained model to ONNX and compares it with onnxruntime; then fine-tunes the real
# PP-OCR direction classifier with a new 10-class head on digits resized to 3x48x192 and
# prints its loss per epoch. Exits non-zero when a step fails, the accuracy is < 97%, the
# training takes >= 120 s, or the classifier's loss does not fall.
#
# Usage: bash scripts/demo_finetune.sh
# Env:   BUILD_DIR  build folder (default build); TESSERA_JOBS  build jobs (default nproc)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
export BUILD_DIR
export CCACHE_BASEDIR="$ROOT"
JOBS="${TESSERA_JOBS:-$(nproc)}"
PY="$BUILD_DIR/venv/bin/python"
OUT="$BUILD_DIR/demo_finetune"
step() { echo "[demo_finetune] $*"; }

bash scripts/install_deps.sh
bash scripts/fetch_models.sh
step "build tessera and tessera-finetune"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release > "$BUILD_DIR/configure_finetune.log" 2>&1 ||
  { tail -n 40 "$BUILD_DIR/configure_finetune.log" >&2; exit 1; }
make -C "$BUILD_DIR" -j"$JOBS" --no-print-directory tessera tessera-finetune > "$BUILD_DIR/build_finetune.log" 2>&1 ||
  { tail -n 40 "$BUILD_DIR/build_finetune.log" >&2; exit 1; }
mkdir -p "$OUT"

step "digits: build the CNN (ONNX) and the data split"
"$PY" apps/finetune/examples/digits_cnn.py --out-dir "$OUT/digits"
"$BUILD_DIR/tessera" convert "$OUT/digits/digits_cnn.onnx" -o "$OUT/digits/cnn.tsr"
step "digits: train"
start=$(date +%s%N)
"$BUILD_DIR/tessera-finetune" --model "$OUT/digits/cnn.tsr" --train "$OUT/digits/train.npz" --val "$OUT/digits/val.npz" \
  --epochs 20 --batch-size 32 --lr 0.05 --optimizer sgd --momentum 0.9 --cosine --out "$OUT/digits/trained.tsr" \
  | tee "$OUT/digits/final.txt"
secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
acc=$(sed -n 's/.*val_accuracy \([0-9.]*\).*/\1/p' "$OUT/digits/final.txt")
step "digits: held-out accuracy $acc, $secs s (metrics: $OUT/digits/trained.tsr.metrics.jsonl)"

step "digits: export to ONNX and compare with onnxruntime"
"$BUILD_DIR/tessera" export "$OUT/digits/trained.tsr" -o "$OUT/digits/trained.onnx"
"$PY" - "$OUT/digits" "$BUILD_DIR/tessera" <<'PYEOF'
import subprocess, sys
import numpy as np, onnxruntime as ort
d, tessera = sys.argv[1], sys.argv[2]
va = np.load(f"{d}/val.npz")
np.save(f"{d}/xval.npy", va["x"])
subprocess.run([tessera, "run", f"{d}/trained.tsr", "-i", f"x={d}/xval.npy", "-o", f"{d}/run"], check=True, stdout=subprocess.DEVNULL)
ours = np.load(f"{d}/run/logits.npy")
theirs = ort.InferenceSession(f"{d}/trained.onnx", providers=["CPUExecutionProvider"]).run(None, {"x": va["x"]})[0]
err = float(np.abs(ours - theirs).max())
print(f"[demo_finetune] exported ONNX in onnxruntime vs tessera run: max abs diff {err:.2e}; "
      f"accuracy tessera {(ours.argmax(1) == va['y']).mean():.4f}, onnxruntime {(theirs.argmax(1) == va['y']).mean():.4f}")
sys.exit(0 if err <= 1e-5 else 1)
PYEOF

step "PP-OCR direction classifier: new 10-class head, digits at 3x48x192"
"$PY" apps/finetune/examples/digits_for_cls.py --out-dir "$OUT/cls" --train 96 --val 48
"$BUILD_DIR/tessera" convert "$BUILD_DIR/models/ch_ppocr_mobile_v2.0_cls_infer.onnx" -o "$OUT/cls/cls.tsr" > /dev/null
"$BUILD_DIR/tessera-finetune" --model "$OUT/cls/cls.tsr" --train "$OUT/cls/cls_train.npz" --val "$OUT/cls/cls_val.npz" \
  --epochs 4 --batch-size 16 --lr 0.002 --optimizer adamw --replace-head 10 --seed 1 --out "$OUT/cls/trained.tsr"
"$PY" - "$OUT/cls/trained.tsr.metrics.jsonl" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by_epoch = {}
for r in rows:
    if "loss" in r:
        by_epoch.setdefault(r["epoch"], []).append(r["loss"])
means = [sum(v) / len(v) for _, v in sorted(by_epoch.items())]
val = [r["val_loss"] for r in rows if "val_loss" in r]
print("[demo_finetune] cls: mean training loss per epoch", " ".join(f"{m:.4f}" for m in means),
      "| validation loss per epoch", " ".join(f"{v:.4f}" for v in val))
sys.exit(0 if means[-1] < means[0] and val[-1] < val[0] else 1)
PYEOF

awk -v a="$acc" -v s="$secs" 'BEGIN { ok = (a >= 0.97 && s < 120); print "[demo_finetune] digits: accuracy " a " (>= 0.97: " (a >= 0.97 ? "yes" : "NO") "), " s " s (< 120: " (s < 120 ? "yes" : "NO") ")"; exit ok ? 0 : 1 }'
