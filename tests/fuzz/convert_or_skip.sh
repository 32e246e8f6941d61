#!/bin/sh
# convert_or_skip.sh TESSERA MODEL.onnx OUT.tsr: converts, or exits 77 (skip) when the ONNX
# model has not been fetched (scripts/fetch_models.sh).
if [ ! -f "$2" ]; then
  echo "SKIP: $2 is missing; run scripts/fetch_models.sh"
  exit 77
fi
mkdir -p "$(dirname "$3")"
exec "$1" convert "$2" -o "$3"
