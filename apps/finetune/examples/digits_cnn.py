#!/usr/bin/env python3
"""Builds the fine-tuning demo's inputs: a small CNN as ONNX (onnx.helper, opset 17) and
scikit-learn's digits (1797 8x8 images, 10 classes) split into train/val .npz files with a
fixed split (stratified, seed 0: 1437 train, 360 val). Pixels are scaled to [0, 1].

  python digits_cnn.py --out-dir DIR      # DIR/digits_cnn.onnx, DIR/train.npz, DIR/val.npz

Model: x[N,1,8,8] -> Conv 1->16 3x3 pad 1 -> Relu -> MaxPool 2 -> Conv 16->32 3x3 pad 1
       -> Relu -> MaxPool 2 -> Flatten -> Gemm 128->10 -> logits[N,10]
Weights: He-uniform (bound sqrt(6 / fan_in)), biases 0, seed 0.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build_model(seed=0):
    rng = np.random.default_rng(seed)

    def he(shape, fan_in):
        b = np.sqrt(6.0 / fan_in)
        return rng.uniform(-b, b, size=shape).astype(np.float32)

    inits = [
        numpy_helper.from_array(he((16, 1, 3, 3), 9), "conv1.w"),
        numpy_helper.from_array(np.zeros(16, np.float32), "conv1.b"),
        numpy_helper.from_array(he((32, 16, 3, 3), 144), "conv2.w"),
        numpy_helper.from_array(np.zeros(32, np.float32), "conv2.b"),
        numpy_helper.from_array(he((10, 128), 128), "fc.w"),
        numpy_helper.from_array(np.zeros(10, np.float32), "fc.b"),
    ]
    pool = dict(kernel_shape=[2, 2], strides=[2, 2])
    nodes = [
        helper.make_node("Conv", ["x", "conv1.w", "conv1.b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", **pool),
        helper.make_node("Conv", ["p1", "conv2.w", "conv2.b"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", **pool),
        helper.make_node("Flatten", ["p2"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
    ]
    g = helper.make_graph(nodes, "digits_cnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 8, 8])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="digits_cnn.py")
    onnx.checker.check_model(m)
    return m


def digits_split():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None, :, :]
    y = d.target.astype(np.int64)
    return train_test_split(x, y, test_size=360, random_state=0, stratify=y)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    onnx.save(build_model(), os.path.join(a.out_dir, "digits_cnn.onnx"))
    xtr, xva, ytr, yva = digits_split()
    np.savez(os.path.join(a.out_dir, "train.npz"), x=xtr, y=ytr)
    np.savez(os.path.join(a.out_dir, "val.npz"), x=xva, y=yva)
    print(f"wrote {a.out_dir}/digits_cnn.onnx, train.npz ({len(ytr)}), val.npz ({len(yva)})")


if __name__ == "__main__":
    main()
