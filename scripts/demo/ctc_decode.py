#!/usr/bin/env python3
"""Greedy CTC decoding of PP-OCR recognition output, as RapidOCR's CTCLabelDecode does.

    ctc_decode.py REC_OUTPUT.npy REC_MODEL.onnx

REC_OUTPUT.npy is the recognizer's softmax output [1, T, 6625]; the character list is the
model's `character` metadata (one per line), with index 0 the CTC blank and a space last.
Prints the text and its mean confidence.
"""
import sys

import numpy as np
import onnx


def decode(probs, chars):
    idx = probs.argmax(axis=-1)
    conf = probs.max(axis=-1)
    text, scores, prev = [], [], -1
    for i, c in zip(idx, conf):
        if i != prev and i != 0:
            text.append(chars[i])
            scores.append(c)
        prev = i
    return "".join(text).strip(), float(np.mean(scores)) if scores else 0.0


def main():
    probs = np.load(sys.argv[1])[0]
    meta = {p.key: p.value for p in onnx.load(sys.argv[2], load_external_data=False).metadata_props}
    chars = ["blank"] + meta["character"].splitlines() + [" "]
    text, score = decode(probs, chars)
    print(f"recognized: {text!r} (mean confidence {score:.3f})")


if __name__ == "__main__":
    main()
