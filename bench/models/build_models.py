#!/usr/bin/env python3
"""Builds the three synthetic benchmark models of bench/cpu_vs_onnxruntime with onnx.helper
and random weights (fixed seed), and one fixed random input for each.

    build_models.py OUT_DIR [--models resnet50 mobilenetv2 bert] [--seed 0] [--no-check]

writes, for each model NAME:
    OUT_DIR/NAME.onnx                       opset 17, IR version 8, weights inside the file
    OUT_DIR/inputs/NAME/<input>.npy         the benchmark input (float32, seeded)
    OUT_DIR/inputs/NAME/args.txt            `--input NAME=FILE` arguments, one per line, as
                                            scripts/demo/prepare_inputs.py writes them
Each model is checked with onnx.checker (full_check: shape inference too) and run once in
onnxruntime on its input (the output must be finite), unless --no-check. Files are written
under a temporary name and renamed into place. The models are not committed: the benchmark
builds them at bench time (ResNet-50 is ~100 MB, the BERT encoder ~340 MB).

The models (the architecture only matters for speed; weights are random, scaled so that
activations stay finite and of order 1):
- resnet50: torchvision's ResNet-50 (He et al. 2015, "Deep Residual Learning", with
  torchvision's v1.5 stride on the 3x3 conv): 7x7/2 conv stem, 3x3/2 max pool, bottleneck
  blocks 3-4-6-3 (widths 64-128-256-512, expansion 4, 1x1 conv + BN downsample on the first
  block of each stage), a BatchNormalization node after every Conv (not folded), Relu,
  GlobalAveragePool, Flatten, Gemm 2048 -> 1000. Input `input` [1, 3, 224, 224].
- mobilenetv2: torchvision's MobileNetV2 (Sandler et al. 2018), width 1.0: 3x3/2 conv stem
  (32), inverted residuals (t, c, n, s) = (1,16,1,1) (6,24,2,2) (6,32,3,2) (6,64,4,2)
  (6,96,3,1) (6,160,3,2) (6,320,1,1) with 3x3 depthwise convs (group = channels), ReLU6 as
  Clip(0, 6), BN after every conv, linear bottleneck, residual Add where stride 1 and
  in == out channels; 1x1 conv to 1280, GlobalAveragePool, Flatten, Gemm 1280 -> 1000.
  Input `input` [1, 3, 224, 224].
- bert: a BERT-base-sized encoder (Devlin et al. 2018): LayerNormalization of the input
  embeddings, then 12 post-LN layers of hidden 768, 12 heads of 64, FFN 3072: Q/K/V as
  MatMul + Add, Reshape [1,128,12,64] + Transpose to heads, MatMul, Mul by 1/sqrt(64),
  Softmax, MatMul, Transpose + Reshape back, output MatMul + Add, residual Add,
  LayerNormalization (epsilon 1e-12); FFN MatMul + Add, exact Gelu as
  0.5 * x * (1 + Erf(x / sqrt(2))) (Gelu is an ONNX op only from opset 20), MatMul + Add,
  residual Add, LayerNormalization. No attention mask. Input `embeddings` [1, 128, 768]
  float32 (token + position embeddings already summed), output `last_hidden_state`.
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8   # what opset 17 needs; Tessera's converter reads it with ONNX 1.12's library
MODELS = ("resnet50", "mobilenetv2", "bert")
INPUT_SHAPES = {
    "resnet50": {"input": (1, 3, 224, 224)},
    "mobilenetv2": {"input": (1, 3, 224, 224)},
    "bert": {"embeddings": (1, 128, 768)},
}


class GraphBuilder:
    """Collects nodes and initializers; names values `<prefix>_<n>` so they stay unique."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.inits = []
        self.n = 0

    def name(self, prefix):
        self.n += 1
        return f"{prefix}_{self.n}"

    def const(self, prefix, array):
        name = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op, inputs, prefix=None, **attrs):
        out = self.name(prefix or op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def normal(self, shape, std):
        return (self.rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)

    # ---- CNN pieces ----
    def conv(self, x, cin, cout, k, stride=1, group=1):
        """Conv without bias (BN follows), He-normal weights: std sqrt(2 / fan_in)."""
        fan_in = cin // group * k * k
        w = self.const("w", self.normal((cout, cin // group, k, k), math.sqrt(2.0 / fan_in)))
        p = k // 2
        return self.node("Conv", [x, w], "conv", kernel_shape=[k, k], strides=[stride, stride],
                         pads=[p, p, p, p], group=group)

    def bn(self, x, c, gamma=1.0):
        """Inference BatchNormalization with plausible running statistics."""
        scale = self.const("bn_scale", (gamma * (1.0 + 0.1 * self.rng.standard_normal(c))).astype(np.float32))
        bias = self.const("bn_bias", (0.05 * self.rng.standard_normal(c)).astype(np.float32))
        mean = self.const("bn_mean", (0.05 * self.rng.standard_normal(c)).astype(np.float32))
        var = self.const("bn_var", (1.0 + 0.2 * self.rng.random(c)).astype(np.float32))
        return self.node("BatchNormalization", [x, scale, bias, mean, var], "bn", epsilon=1e-5)

    def head(self, x, cin, classes=1000):
        x = self.node("GlobalAveragePool", [x], "gap")
        x = self.node("Flatten", [x], "flatten", axis=1)
        w = self.const("fc_w", self.normal((classes, cin), 1.0 / math.sqrt(cin)))
        b = self.const("fc_b", np.zeros(classes, np.float32))
        return self.node("Gemm", [x, w, b], "fc", transB=1)


def build_resnet50(g):
    x = "input"
    x = g.node("Relu", [g.bn(g.conv(x, 3, 64, 7, 2), 64)], "relu")
    x = g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        cout = width * 4
        for i in range(blocks):
            s = stride if i == 0 else 1
            y = g.node("Relu", [g.bn(g.conv(x, cin, width, 1), width)], "relu")
            y = g.node("Relu", [g.bn(g.conv(y, width, width, 3, s), width)], "relu")
            # A small gamma on the block's last BN keeps the residual sum from growing
            # block after block (as zero-init-residual training does, less extreme).
            y = g.bn(g.conv(y, width, cout, 1), cout, gamma=0.2)
            shortcut = x
            if i == 0:
                shortcut = g.bn(g.conv(x, cin, cout, 1, s), cout)
            x = g.node("Relu", [g.node("Add", [y, shortcut], "add")], "relu")
            cin = cout
    return g.head(x, 2048), (1, 1000)


def build_mobilenetv2(g):
    zero = g.const("clip_min", np.array(0.0, np.float32))
    six = g.const("clip_max", np.array(6.0, np.float32))

    def relu6(v):
        return g.node("Clip", [v, zero, six], "relu6")

    x = relu6(g.bn(g.conv("input", 3, 32, 3, 2), 32))
    cin = 32
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = x
            if t != 1:
                y = relu6(g.bn(g.conv(y, cin, hidden, 1), hidden))
            y = relu6(g.bn(g.conv(y, hidden, hidden, 3, stride, group=hidden), hidden))
            y = g.bn(g.conv(y, hidden, c, 1), c, gamma=0.5)
            if stride == 1 and cin == c:
                y = g.node("Add", [x, y], "add")
            x = y
            cin = c
    x = relu6(g.bn(g.conv(x, cin, 1280, 1), 1280))
    return g.head(x, 1280), (1, 1000)


def build_bert(g, layers=12, hidden=768, heads=12, ffn=3072, seq=128):
    dh = hidden // heads
    std = 0.02   # BERT's initializer_range

    def linear(v, n_in, n_out):
        w = g.const("w", g.normal((n_in, n_out), std))
        b = g.const("b", g.normal((n_out,), std))
        return g.node("Add", [g.node("MatMul", [v, w], "matmul"), b], "add")

    def layer_norm(v):
        scale = g.const("ln_scale", (1.0 + g.normal((hidden,), 0.02)).astype(np.float32))
        bias = g.const("ln_bias", g.normal((hidden,), 0.02))
        return g.node("LayerNormalization", [v, scale, bias], "ln", axis=-1, epsilon=1e-12)

    to_heads = g.const("shape_heads", np.array([1, seq, heads, dh], np.int64))
    to_hidden = g.const("shape_hidden", np.array([1, seq, hidden], np.int64))
    inv_sqrt_dh = g.const("inv_sqrt_dh", np.array(1.0 / math.sqrt(dh), np.float32))
    inv_sqrt2 = g.const("inv_sqrt2", np.array(1.0 / math.sqrt(2.0), np.float32))
    one = g.const("one", np.array(1.0, np.float32))
    half = g.const("half", np.array(0.5, np.float32))

    x = layer_norm("embeddings")
    for _ in range(layers):
        q = g.node("Transpose", [g.node("Reshape", [linear(x, hidden, hidden), to_heads], "reshape")],
                   "transpose", perm=[0, 2, 1, 3])                              # [1, 12, 128, 64]
        k = g.node("Transpose", [g.node("Reshape", [linear(x, hidden, hidden), to_heads], "reshape")],
                   "transpose", perm=[0, 2, 3, 1])                              # [1, 12, 64, 128]
        v = g.node("Transpose", [g.node("Reshape", [linear(x, hidden, hidden), to_heads], "reshape")],
                   "transpose", perm=[0, 2, 1, 3])                              # [1, 12, 128, 64]
        scores = g.node("Mul", [g.node("MatMul", [q, k], "matmul"), inv_sqrt_dh], "mul")
        probs = g.node("Softmax", [scores], "softmax", axis=-1)
        ctx = g.node("Transpose", [g.node("MatMul", [probs, v], "matmul")], "transpose", perm=[0, 2, 1, 3])
        ctx = g.node("Reshape", [ctx, to_hidden], "reshape")                     # [1, 128, 768]
        x = layer_norm(g.node("Add", [linear(ctx, hidden, hidden), x], "add"))
        h = linear(x, hidden, ffn)
        erf = g.node("Erf", [g.node("Mul", [h, inv_sqrt2], "mul")], "erf")
        gelu = g.node("Mul", [g.node("Mul", [h, half], "mul"), g.node("Add", [erf, one], "add")], "gelu")
        x = layer_norm(g.node("Add", [linear(gelu, ffn, hidden), x], "add"))
    return x, (1, seq, hidden)


BUILDERS = {"resnet50": build_resnet50, "mobilenetv2": build_mobilenetv2, "bert": build_bert}
OUTPUT_NAMES = {"resnet50": "logits", "mobilenetv2": "logits", "bert": "last_hidden_state"}


def build_model(name, seed=0):
    """The onnx.ModelProto of `name` (one of MODELS), weights drawn from numpy's PCG64 with
    `seed` (a per-model offset keeps the models' weights independent)."""
    g = GraphBuilder(np.random.default_rng(seed + 1000 * MODELS.index(name)))
    out, out_shape = BUILDERS[name](g)
    out_name = OUTPUT_NAMES[name]
    g.nodes.append(helper.make_node("Identity", [out], [out_name], name=out_name))
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in INPUT_SHAPES[name].items()]
    outputs = [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, list(out_shape))]
    graph = helper.make_graph(g.nodes, name, inputs, outputs, initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="tessera-bench-build_models")
    model.ir_version = IR_VERSION
    return model


def make_inputs(name, seed=0):
    """{input name: float32 array}: standard normal values, seeded (image-like for the CNNs,
    embedding-like for the encoder: both are roughly unit-variance after normalization)."""
    rng = np.random.default_rng(seed + 7 + 1000 * MODELS.index(name))
    return {n: rng.standard_normal(s, dtype=np.float32) for n, s in INPUT_SHAPES[name].items()}


def _atomic_write(path, write):
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _save_npy(path, array):
    with open(path, "wb") as f:   # a file object: np.save would append ".npy" to a name
        np.save(f, array)


def _save_text(path, text):
    with open(path, "w") as f:
        f.write(text)


def check_model(path, feeds):
    """onnx.checker (with shape inference) on the file, then one onnxruntime run; returns
    a one-line summary or raises on a failure or a non-finite output."""
    onnx.checker.check_model(path, full_check=True)
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, sess_options=so, providers=["CPUExecutionProvider"])
    (out,) = sess.run(None, feeds)
    if not np.isfinite(out).all():
        raise RuntimeError(f"{path}: onnxruntime output is not finite")
    return f"checker ok, onnxruntime output {list(out.shape)} std {float(out.std()):.3g}"


def build(out_dir, names=MODELS, seed=0, check=True, log=print):
    """Writes each model of `names` and its input under out_dir (see the module docstring)."""
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        model = build_model(name, seed)
        path = os.path.join(out_dir, f"{name}.onnx")
        _atomic_write(path, lambda p: onnx.save_model(model, p))
        in_dir = os.path.join(out_dir, "inputs", name)
        os.makedirs(in_dir, exist_ok=True)
        feeds = make_inputs(name, seed)
        args = []
        for n, a in feeds.items():
            f = os.path.join(in_dir, f"{n}.npy")
            _atomic_write(f, lambda p, a=a: _save_npy(p, a))
            args += ["--input", f"{n}={os.path.abspath(f)}"]
        _atomic_write(os.path.join(in_dir, "args.txt"), lambda p: _save_text(p, "\n".join(args) + "\n"))
        mb = os.path.getsize(path) / 2**20
        note = check_model(path, feeds) if check else "not checked"
        log(f"[build_models] {name}: {path} ({len(model.graph.node)} nodes, {mb:.1f} MiB); {note}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-check", action="store_true", help="skip onnx.checker and the onnxruntime run")
    a = ap.parse_args(argv)
    build(a.out_dir, a.models, a.seed, check=not a.no_check)


if __name__ == "__main__":
    sys.exit(main())
