#!/usr/bin/env python3
"""Digits for the PP-OCR direction classifier (ch_ppocr_mobile_v2.0_cls, input [N,3,48,192]):
each 8x8 digit (scikit-learn) is scaled 6x (nearest) to 48x48, repeated 4 times along the
width to fill 48x192, copied to 3 channels and normalized as PaddleOCR does ((v - 0.5) / 0.5,
v in [0, 1]). A fixed stratified subset (seed 0) keeps the run short.

  python digits_for_cls.py --out-dir DIR [--train 200 --val 100]   # DIR/cls_train.npz, DIR/cls_val.npz
"""
import argparse
import os

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--train", type=int, default=200)
    ap.add_argument("--val", type=int, default=100)
    a = ap.parse_args()
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = d.images / 16.0
    x = np.kron(x, np.ones((6, 6)))                     # [N, 48, 48]
    x = np.tile(x, (1, 1, 4))                           # [N, 48, 192]
    x = ((x - 0.5) / 0.5).astype(np.float32)[:, None]   # [N, 1, 48, 192]
    x = np.repeat(x, 3, axis=1)                         # [N, 3, 48, 192]
    y = d.target.astype(np.int64)
    xtr, xva, ytr, yva = train_test_split(x, y, train_size=a.train, test_size=a.val, random_state=0, stratify=y)
    os.makedirs(a.out_dir, exist_ok=True)
    np.savez(os.path.join(a.out_dir, "cls_train.npz"), x=xtr, y=ytr)
    np.savez(os.path.join(a.out_dir, "cls_val.npz"), x=xva, y=yva)
    print(f"wrote {a.out_dir}/cls_train.npz ({len(ytr)}), cls_val.npz ({len(yva)})")


if __name__ == "__main__":
    main()
