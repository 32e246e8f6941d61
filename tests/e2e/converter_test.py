#!/usr/bin/env python3
"""Converter tests on small ONNX models built here with onnx.helper, each converted and run
by the `tessera` CLI and compared with onnxruntime run now on the same input.

    converter_test.py --tessera BIN --work-dir DIR --case CASE

Cases:
  conv_bn_fold      Conv + BatchNormalization (+ Relu): folded into one Conv, same numbers.
  constant_fold     a Shape -> Gather -> Unsqueeze -> Concat -> Reshape chain on weights is
                    folded away, and Constant nodes become weights.
  dead_code         a branch that no output needs is removed.
  external_data     weights in an external data file next to the model.
  if_runtime_cond   If with a condition that is a graph input: both branches, per run.
  opset7            an opset-7 model (Unsqueeze/Squeeze with axes attributes, Upsample-free).
  opset1            an opset-1 model runs when its ops did not change before opset 7 (Not,
                    compared with numpy); one using an op that did (Add) is refused, naming it.
  pb_io             inputs and outputs as ONNX TensorProto (.pb) files: bfloat16 and int4, which
                    .npy cannot hold, through Cast; .npy output of them is refused, naming
                    --output-format.
  unsupported_op    an op Tessera does not know: the error names the op, node and opset,
                    and no .tsr is left behind.
  wrong_rank_input  running with an input of the wrong rank names the input.
  hostile_strides0  Conv/MaxPool with strides 0: a clean error naming the attribute (ONNX's own
                    shape inference dies of SIGFPE on it, so Tessera does not run it).
  unsorted_chain    100000 nodes listed last-to-first: converted (iterative sort), runs right.
  hostile_external  external data through a symlink out of the folder, a FIFO, a claimed
                    size larger than the data: each a clean error, no hang, no huge allocation.
  bench_json        `tessera bench --json` gives every timed run in "runs_ms" (in run order,
                    one per --runs), consistent with its median_ms and min_ms; the benchmark
                    bench/cpu_vs_onnxruntime pools these over several processes.
Exit status: 0 pass, 1 fail, 77 skip (packages missing; the reason is printed).
"""
import argparse
import os
import shutil
import subprocess
import sys

SKIP = 77
try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"SKIP: Python package missing ({e}); run scripts/install_deps.sh")
    sys.exit(SKIP)


class Failure(Exception):
    pass


def sh(cmd, expect_ok=True):
    print("$ " + " ".join(map(str, cmd)), flush=True)
    p = subprocess.run(list(map(str, cmd)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    out = p.stdout.decode(errors="replace")
    print(out, end="")
    if expect_ok and p.returncode != 0:
        raise Failure(f"exit {p.returncode}")
    if not expect_ok and not (1 <= p.returncode <= 127):
        raise Failure(f"expected a clean error exit (1..127), got {p.returncode}")
    return out


def save_npy(path, a):
    np.save(path, a)
    return path


def convert_run_compare(args, model, inputs, tol=1e-5, expect_nodes=None, save_external=False):
    """Converts `model`, runs it on `inputs` with tessera and onnxruntime, compares."""
    w = args.work_dir
    onnx_path = os.path.join(w, "model.onnx")
    if save_external:
        onnx.save_model(model, onnx_path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="weights.bin", size_threshold=0)
        if not os.path.exists(os.path.join(w, "weights.bin")):
            raise Failure("the test did not write external data")
    else:
        onnx.save(model, onnx_path)
    tsr = os.path.join(w, "model.tsr")
    sh([args.tessera, "convert", onnx_path, "-o", tsr])
    info = sh([args.tessera, "inspect", tsr, "--json"])
    import json
    nodes = json.loads(info.strip().splitlines()[-1])["nodes"]
    if expect_nodes is not None and nodes != expect_nodes:
        raise Failure(f"expected {expect_nodes} nodes after conversion, got {nodes}")
    cmd = [args.tessera, "run", tsr, "--output-dir", os.path.join(w, "out")]
    for name, a in inputs.items():
        cmd += ["--input", f"{name}={save_npy(os.path.join(w, name + '.npy'), a)}"]
    sh(cmd)
    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    want = sess.run(None, inputs)
    for o, ref in zip(sess.get_outputs(), want):
        got = np.load(os.path.join(w, "out", o.name + ".npy"))
        if got.shape != ref.shape or got.dtype != ref.dtype:
            raise Failure(f"{o.name}: {got.dtype}{got.shape} vs onnxruntime {ref.dtype}{ref.shape}")
        err = np.linalg.norm((got.astype(np.float64) - ref).ravel()) / max(np.linalg.norm(ref.ravel()), 1e-30)
        print(f"{o.name}: rel error {err:.3e}")
        if not err <= tol:
            raise Failure(f"{o.name}: rel error {err:.3e} > {tol}")
    return nodes


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def model_of(nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def case_conv_bn_fold(args):
    inits = {"W": rnd(8, 3, 3, 3, seed=1), "B": rnd(8, seed=2), "gamma": rnd(8, seed=3) + 2,
             "beta": rnd(8, seed=4), "mean": rnd(8, seed=5), "var": np.abs(rnd(8, seed=6)) + 0.5}
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["bn"], epsilon=1e-3),
             helper.make_node("Relu", ["bn"], ["y"])]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 9, 11])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits, opset=12)
    convert_run_compare(args, m, {"x": rnd(2, 3, 9, 11, seed=7)}, expect_nodes=2)


def case_constant_fold(args):
    inits = {"w": rnd(4, 6, seed=1)}
    nodes = [helper.make_node("Shape", ["w"], ["s"]),
             helper.make_node("Constant", [], ["idx"], value=numpy_helper.from_array(np.array(1, np.int64))),
             helper.make_node("Gather", ["s", "idx"], ["d"], axis=0),
             helper.make_node("Unsqueeze", ["d", "zero"], ["d1"]),
             helper.make_node("Constant", [], ["minus1"], value=numpy_helper.from_array(np.array([-1], np.int64))),
             helper.make_node("Concat", ["minus1", "d1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["xr"]),
             helper.make_node("Add", ["xr", "bias_row"], ["y"])]
    inits["zero"] = np.array([0], np.int64)
    inits["bias_row"] = rnd(6, seed=2)
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 6])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    # Only Reshape and Add are left: the shape chain is computed at conversion.
    convert_run_compare(args, m, {"x": rnd(2, 3, 6, seed=3)}, expect_nodes=2)


def case_dead_code(args):
    nodes = [helper.make_node("Relu", ["x"], ["y"]),
             helper.make_node("Sigmoid", ["x"], ["unused1"]),
             helper.make_node("Tanh", ["unused1"], ["unused2"])]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], {})
    convert_run_compare(args, m, {"x": rnd(3, 5)}, expect_nodes=1)


def case_external_data(args):
    inits = {"A": rnd(5, 7, seed=1), "b": rnd(7, seed=2)}
    nodes = [helper.make_node("MatMul", ["x", "A"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"])]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 5])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    convert_run_compare(args, m, {"x": rnd(4, 5, seed=3)}, save_external=True)


def case_if_runtime_cond(args):
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Sub", ["x", "two"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2, 3])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], {"two": np.float32([2.0])})
    for c in (True, False):
        convert_run_compare(args, m, {"x": rnd(2, 3, seed=1), "c": np.array(c)})


def case_opset7(args):
    nodes = [helper.make_node("Unsqueeze", ["x"], ["u"], axes=[0]),
             helper.make_node("Squeeze", ["u"], ["s"], axes=[0]),
             helper.make_node("Sigmoid", ["s"], ["y"])]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], {}, opset=7)
    m.ir_version = 3
    convert_run_compare(args, m, {"x": rnd(4, 3)})


def case_opset1(args):
    x = np.array([[True, False, True], [False, False, True]])
    m = model_of([helper.make_node("Not", ["x"], ["y"])], [helper.make_tensor_value_info("x", TensorProto.BOOL, [2, 3])],
                 [helper.make_tensor_value_info("y", TensorProto.BOOL, [2, 3])], {}, opset=1)
    m.ir_version = 3
    w = args.work_dir
    onnx.save(m, os.path.join(w, "not.onnx"))
    sh([args.tessera, "convert", os.path.join(w, "not.onnx"), "-o", os.path.join(w, "not.tsr")])
    sh([args.tessera, "run", os.path.join(w, "not.tsr"), "--input", f"x={save_npy(os.path.join(w, 'x.npy'), x)}",
        "--output-dir", os.path.join(w, "out")])
    got = np.load(os.path.join(w, "out", "y.npy"))
    if not np.array_equal(got, np.logical_not(x)):
        raise Failure(f"Not at opset 1: got {got}")
    m = model_of([helper.make_node("Add", ["a", "a"], ["y"])], [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], {}, opset=1)
    m.ir_version = 3
    onnx.save(m, os.path.join(w, "add.onnx"))
    out = sh([args.tessera, "convert", os.path.join(w, "add.onnx"), "-o", os.path.join(w, "add.tsr")], expect_ok=False)
    for must in ("Add", "opset 1"):
        if must not in out:
            raise Failure(f"the error does not name {must!r}")


def case_pb_io(args):
    w = args.work_dir
    x = np.array([[-9.0, -2.5, 0.5], [1.5, 3.25, 100.0]], dtype=np.float32)
    nodes = [helper.make_node("Cast", ["x"], ["b"], to=TensorProto.BFLOAT16),
             helper.make_node("Cast", ["x"], ["i"], to=TensorProto.INT4),
             helper.make_node("Cast", ["b"], ["y"], to=TensorProto.FLOAT)]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                 [helper.make_tensor_value_info("b", TensorProto.BFLOAT16, [2, 3]),
                  helper.make_tensor_value_info("i", TensorProto.INT4, [2, 3]),
                  helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], {}, opset=21)
    m.ir_version = 10
    onnx.save(m, os.path.join(w, "m.onnx"))
    tsr = os.path.join(w, "m.tsr")
    sh([args.tessera, "convert", os.path.join(w, "m.onnx"), "-o", tsr])
    xpb = os.path.join(w, "x.pb")
    with open(xpb, "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    sh([args.tessera, "run", tsr, "--input", f"x={xpb}", "--output-dir", os.path.join(w, "out"), "--output-format", "pb"])
    b = onnx.load_tensor(os.path.join(w, "out", "b.pb"))
    bits = np.frombuffer(b.raw_data, dtype=np.uint16)
    # bfloat16 of each value by round-to-nearest-even on the float32 bits
    u = x.view(np.uint32).ravel()
    want_bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    if b.data_type != TensorProto.BFLOAT16 or not np.array_equal(bits, want_bits):
        raise Failure(f"bfloat16 output: type {b.data_type}, bits {bits} != {want_bits}")
    i = onnx.load_tensor(os.path.join(w, "out", "i.pb"))
    packed = np.frombuffer(i.raw_data, dtype=np.uint8)
    nib = np.stack([packed & 0x0F, packed >> 4], axis=1).ravel()[:6].astype(np.int16)
    vals = np.where(nib >= 8, nib - 16, nib)
    want = np.rint(np.clip(x, -8, 7)).ravel()
    if i.data_type != TensorProto.INT4 or not np.array_equal(vals, want):
        raise Failure(f"int4 output: type {i.data_type}, values {vals} != {want}")
    y = numpy_helper.to_array(onnx.load_tensor(os.path.join(w, "out", "y.pb")))
    if not np.array_equal(y.ravel(), (want_bits.astype(np.uint32) << 16).view(np.float32)):
        raise Failure(f"float output {y}")
    out = sh([args.tessera, "run", tsr, "--input", f"x={xpb}", "--output-dir", os.path.join(w, "out2")], expect_ok=False)
    if "--output-format pb" not in out:
        raise Failure("writing bfloat16 as .npy does not point to --output-format pb")


def case_unsupported_op(args):
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Frobnicate", ["r", "r"], ["y"], name="my_nms")]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 4])],
                 [helper.make_tensor_value_info("y", TensorProto.INT64, None)], {})
    path = os.path.join(args.work_dir, "model.onnx")
    onnx.save(m, path)
    tsr = os.path.join(args.work_dir, "model.tsr")
    out = sh([args.tessera, "convert", path, "-o", tsr], expect_ok=False)
    for must in ("Frobnicate", "my_nms", "opset 17"):
        if must not in out:
            raise Failure(f"the error does not name {must!r}")
    if os.path.exists(tsr) or any(f.startswith("model.tsr") for f in os.listdir(args.work_dir)):
        raise Failure("a failed conversion left a file behind")


def case_wrong_rank_input(args):
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], {})
    path = os.path.join(args.work_dir, "model.onnx")
    onnx.save(m, path)
    tsr = os.path.join(args.work_dir, "model.tsr")
    sh([args.tessera, "convert", path, "-o", tsr])
    npy = save_npy(os.path.join(args.work_dir, "x.npy"), rnd(2, 4, 1))
    out = sh([args.tessera, "run", tsr, "--input", f"x={npy}"], expect_ok=False)
    if "'x'" not in out or "rank" not in out:
        raise Failure("the error does not name input 'x' and its rank")


def run_expect_error(args, model, inputs, must):
    path = os.path.join(args.work_dir, "model.onnx")
    onnx.save(model, path)
    tsr = os.path.join(args.work_dir, "model.tsr")
    out = sh([args.tessera, "convert", path, "-o", tsr], expect_ok=False) if not must.get("convert_ok") else \
        sh([args.tessera, "convert", path, "-o", tsr])
    if must.get("convert_ok"):
        cmd = [args.tessera, "run", tsr]
        for name, a in inputs.items():
            cmd += ["--input", f"{name}={save_npy(os.path.join(args.work_dir, name + '.npy'), a)}"]
        out = sh(cmd, expect_ok=False)
    for text in must["text"]:
        if text not in out:
            raise Failure(f"the error does not say {text!r}")


def case_hostile_strides0(args):
    for op, extra in (("Conv", {"inputs": ["x", "W"]}), ("MaxPool", {"inputs": ["x"], "kernel_shape": [3, 3]})):
        attrs = {"strides": [0, 0]}
        if "kernel_shape" in extra:
            attrs["kernel_shape"] = extra["kernel_shape"]
        nodes = [helper.make_node(op, extra["inputs"], ["y"], name="bad", **attrs)]
        m = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], {"W": rnd(2, 4, 3, 3)})
        run_expect_error(args, m, {"x": rnd(1, 4, 6, 6)}, {"convert_ok": True, "text": ["strides", "bad"]})


def case_unsorted_chain(args):
    n = 100000
    nodes = [helper.make_node("Neg", [f"t{i}"], [f"t{i + 1}"]) for i in range(n)]
    nodes.reverse()
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, [3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = os.path.join(args.work_dir, "model.onnx")
    onnx.save(m, path)
    tsr = os.path.join(args.work_dir, "model.tsr")
    sh([args.tessera, "convert", path, "-o", tsr])
    x = np.float32([1.5, -2.0, 0.25])
    out_dir = os.path.join(args.work_dir, "out")
    sh([args.tessera, "run", tsr, "--input", f"t0={save_npy(os.path.join(args.work_dir, 'x.npy'), x)}", "-o", out_dir])
    got = np.load(os.path.join(out_dir, f"t{n}.npy"))
    if not np.array_equal(got, x):  # an even number of negations
        raise Failure(f"100000 Neg gave {got}, want {x}")


def case_hostile_external(args):
    w = args.work_dir
    os.symlink("/etc/passwd", os.path.join(w, "link_out"))
    os.mkfifo(os.path.join(w, "fifo"))
    for location, length, must in (("link_out", 16, "outside the model's folder"),
                                   ("fifo", 16, "not a regular file")):
        t = TensorProto()
        t.name, t.data_type = "W", TensorProto.FLOAT
        t.dims.extend([4])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", "0"), ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        g = helper.make_graph([helper.make_node("Add", ["x", "W"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[t])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        path = os.path.join(w, "model.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        out = sh([args.tessera, "convert", path, "-o", os.path.join(w, "model.tsr")], expect_ok=False)
        if must not in out:
            raise Failure(f"external data {location!r}: the error does not say {must!r}")
    # raw_data claiming 2 GB with 16 bytes: rejected before any allocation of that size.
    t = numpy_helper.from_array(np.zeros(4, np.float32), "W")
    del t.dims[:]
    t.dims.extend([500_000_000])
    g = helper.make_graph([helper.make_node("Add", ["x", "W"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[t])
    path = os.path.join(w, "claim.onnx")
    with open(path, "wb") as f:
        f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    import resource
    out = sh([args.tessera, "convert", path, "-o", os.path.join(w, "claim.tsr")], expect_ok=False)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if "needs 2000000000 bytes" not in out:
        raise Failure("the claimed size is not reported")
    if peak_kb > 500_000:
        raise Failure(f"converting a 16-byte tensor that claims 2 GB peaked at {peak_kb} kB")


def case_bench_json(args):
    import json
    import statistics
    w = args.work_dir
    m = model_of([helper.make_node("MatMul", ["x", "W"], ["y"])],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 32])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 8])], {"W": rnd(32, 8, seed=1)})
    onnx_path, tsr = os.path.join(w, "model.onnx"), os.path.join(w, "model.tsr")
    onnx.save(m, onnx_path)
    sh([args.tessera, "convert", onnx_path, "-o", tsr])
    x = save_npy(os.path.join(w, "x.npy"), rnd(16, 32, seed=2))
    for runs in (1, 4):
        out = sh([args.tessera, "bench", tsr, "--input", f"x={x}", "--runs", runs, "--warmup", 0, "--json"])
        res = json.loads(out.strip().splitlines()[-1])
        ms = res.get("runs_ms")
        if not isinstance(ms, list) or len(ms) != runs or res.get("runs") != runs:
            raise Failure(f"--runs {runs}: runs_ms {ms!r}, runs {res.get('runs')!r}")
        if not all(isinstance(v, (int, float)) and 0 <= v < 60000 for v in ms):
            raise Failure(f"runs_ms holds a value that is not a time in ms: {ms}")
        # The JSON prints 3 decimals of each number: allow that rounding.
        if abs(statistics.median(ms) - res["median_ms"]) > 2e-3 or abs(min(ms) - res["min_ms"]) > 2e-3:
            raise Failure(f"runs_ms {ms} disagrees with median_ms {res['median_ms']} / min_ms {res['min_ms']}")


CASES = {name[5:]: f for name, f in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    args = ap.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    try:
        CASES[args.case](args)
    except Failure as e:
        print(f"FAIL: {args.case}: {e}")
        return 1
    print(f"PASS: {args.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
