#!/usr/bin/env python3
"""ONNX conformance: runs the ONNX backend node tests through the `tessera` CLI.

    run_node_tests.py --tessera BIN [--backend cpu] [--data-dir DIR] [--work-dir DIR] [--time-limit S]
                      [--filter REGEX] [--ops OP,OP...] [--jobs N] [--json-out F] [--md-out F]

Each node test is a folder with model.onnx and test_data_set_*/{input,output}_*.pb. For
each: convert model.onnx with `tessera convert`, run every data set with `tessera run
--backend B`, compare every output with output_*.pb (|got - want| <= atol + rtol * |want|,
rtol 1e-3 and atol 1e-5 by default, per-test overrides in TOLERANCE with their reasons, as
onnxruntime's runner keeps them; NaNs must match; shapes and dtypes must match), and
classify the test:

  passed       every output of every data set within tolerance
  failed       wrong numbers, wrong shape or dtype, or an error that is not "unsupported"
  unsupported  Tessera said UNIMPLEMENTED (names the missing op, attribute or dtype)
  skipped      the test needs what Tessera does not hold by design: string, sequence,
               optional or map types, or training-only ops; or its ops are outside the
               ONNX default domain (ai.onnx.ml), which the conformance goal does not
               count (the reason is given)

A crash (a signal) or a hang (the time limit) of the CLI is a failure that is also counted
on its own: the runner exits 1 if any test crashed or hung, and 0 otherwise. The last line
printed is the summary:

  conformance (cpu, onnx 1.17.0): P passed, F failed, U unsupported, S skipped, out of T

The data come from the `onnx` Python package of the test virtual environment (its wheel
carries onnx/backend/test/data/node), or from --data-dir (e.g. Debian's libonnx-testdata).
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError as e:
    print(f"SKIP: Python package missing ({e}); run scripts/install_deps.sh")
    sys.exit(77)

DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-5
TIMEOUT_S = 120

# Per-test tolerance overrides: test name -> (rtol, atol, reason).
TOLERANCE = {
    # The expected data truncate float32 to bfloat16 (onnx's backend/test/case/node/cast.py
    # shifts the bits right by 16); Cast rounds to nearest even, as onnx's reference
    # implementation and onnxruntime do. One bfloat16 ulp is at most 2^-7 relative.
    "test_cast_FLOAT_to_BFLOAT16": (2.0 ** -7, 0.0, "expected data truncate; Cast rounds to nearest even (1 ulp)"),
    "test_castlike_FLOAT_to_BFLOAT16": (2.0 ** -7, 0.0, "expected data truncate; CastLike rounds to nearest even (1 ulp)"),
    "test_castlike_FLOAT_to_BFLOAT16_expanded": (2.0 ** -7, 0.0, "as test_castlike_FLOAT_to_BFLOAT16"),
}

TRAINING_DOMAINS = {"ai.onnx.preview.training"}


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def default_data_dir():
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")


def value_kind(vi):
    """'tensor' for a tensor of a holdable element type, else the reason it is not."""
    t = vi.type
    which = t.WhichOneof("value")
    if which != "tensor_type":
        return f"{which or 'untyped'} type"
    if t.tensor_type.elem_type == onnx.TensorProto.STRING:
        return "string tensors"
    return "tensor"


def ops_of(model):
    return [n.op_type for n in model.graph.node]


def skip_reason(model):
    for vi in list(model.graph.input) + list(model.graph.output):
        k = value_kind(vi)
        if k != "tensor":
            return f"{k} ('{vi.name}')"
    for n in model.graph.node:
        if n.domain in TRAINING_DOMAINS:
            return f"training-only op {n.domain}.{n.op_type}"
        if n.domain not in ("", "ai.onnx"):
            return f"op {n.domain}.{n.op_type} is outside the ONNX default domain"
    return None


def run_cli(cmd):
    """(status, output text): status 'ok', 'error', 'crash' (signal) or 'hang'."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "hang", f"no answer within {TIMEOUT_S} s"
    out = p.stdout.decode(errors="replace")
    if p.returncode == 0:
        return "ok", out
    if p.returncode < 0 or p.returncode >= 128:
        return "crash", f"exit {p.returncode}: {out[-500:]}"
    return "error", out


def error_line(text):
    for line in text.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    return text.strip().splitlines()[-1] if text.strip() else "(no message)"


def float8_table(exp_bits, bias, fnuz, fn):
    """float32 values of the 256 codes of an 8-bit float (sign, exp_bits exponent bits with
    `bias`, 7 - exp_bits mantissa bits), as in the ONNX spec's float8 types (onnx/docs/
    Float8.md): FN types have no infinities (E4M3FN: only S.1111.111 is NaN); FNUZ types have
    no negative zero and 0x80 is their only NaN; E5M2 is IEEE-like (exponent 11111: inf/NaN).
    Written out here because numpy_helper's float8 converters moved between onnx releases."""
    man_bits = 7 - exp_bits
    out = np.empty(256, dtype=np.float32)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> man_bits) & ((1 << exp_bits) - 1)
        m = code & ((1 << man_bits) - 1)
        if fnuz and code == 0x80:
            v = np.nan
        elif not fn and e == (1 << exp_bits) - 1:
            v = sign * np.inf if m == 0 else np.nan
        elif fn and not fnuz and e == (1 << exp_bits) - 1 and m == (1 << man_bits) - 1:
            v = np.nan
        elif e == 0:
            v = sign * m * 2.0 ** (1 - bias - man_bits)
        else:
            v = sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
        out[code] = v
    return out


FLOAT8 = {
    onnx.TensorProto.FLOAT8E4M3FN: float8_table(4, 7, fnuz=False, fn=True),
    onnx.TensorProto.FLOAT8E4M3FNUZ: float8_table(4, 8, fnuz=True, fn=True),
    onnx.TensorProto.FLOAT8E5M2: float8_table(5, 15, fnuz=False, fn=False),
    onnx.TensorProto.FLOAT8E5M2FNUZ: float8_table(5, 16, fnuz=True, fn=True),
}


def element_bits(tp, itemsize):
    """The stored elements of a TensorProto as unsigned ints (uint8 or uint16), from
    raw_data or int32_data. numpy_helper.to_array is not used for these dtypes: onnx 1.17's
    ignores raw_data for bfloat16."""
    dt = np.uint8 if itemsize == 1 else np.uint16
    if tp.HasField("raw_data"):
        return np.frombuffer(tp.raw_data, dtype=dt).copy()
    return np.asarray(tp.int32_data, dtype=np.int64).astype(dt)


def comparable(tp, declared):
    """A TensorProto as a plain numpy array: float8 and bfloat16 values as float32 (exact),
    int4/uint4 as int8/uint8. `declared` is the model output's element type: some ONNX test
    data store a bfloat16 output as raw uint16 bits (data_type UINT16)."""
    code = tp.data_type
    shape = tuple(tp.dims)
    if code in FLOAT8:
        return FLOAT8[code][element_bits(tp, 1)].reshape(shape)
    if code in (onnx.TensorProto.INT4, onnx.TensorProto.UINT4):
        packed = element_bits(tp, 1)
        nib = np.empty(packed.size * 2, dtype=np.uint8)
        nib[0::2], nib[1::2] = packed & 0x0F, packed >> 4
        nib = nib[: int(np.prod(shape, dtype=np.int64))]
        if code == onnx.TensorProto.INT4:
            return np.where(nib >= 8, nib.astype(np.int16) - 16, nib).astype(np.int8).reshape(shape)
        return nib.reshape(shape)
    if code == onnx.TensorProto.BFLOAT16 or (declared == onnx.TensorProto.BFLOAT16 and code == onnx.TensorProto.UINT16):
        bits = element_bits(tp, 2)
        return (bits.astype(np.uint32) << 16).view(np.float32).reshape(shape)
    return numpy_helper.to_array(tp)


def retag_bfloat16_input(pb, declared, tmp_path):
    """The ONNX test data store some bfloat16 inputs as raw uint16 bits (data_type UINT16);
    the same bits re-tagged BFLOAT16 are what the model takes. Other inputs pass unchanged."""
    if declared != onnx.TensorProto.BFLOAT16:
        return pb
    tp = onnx.load_tensor(pb)
    if tp.data_type != onnx.TensorProto.UINT16:
        return pb
    tp.data_type = onnx.TensorProto.BFLOAT16
    with open(tmp_path, "wb") as f:
        f.write(tp.SerializeToString())
    return tmp_path


def compare(got, want, rtol, atol):
    """None if equal within tolerance, else a short reason."""
    if got.shape != want.shape:
        return f"shape {list(got.shape)} != expected {list(want.shape)}"
    if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
        if got.dtype != want.dtype:
            return f"dtype {got.dtype} != expected {want.dtype}"
        bad = np.count_nonzero(got != want)
        return None if bad == 0 else f"{bad} of {want.size} elements differ"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != expected {want.dtype}"
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    if not np.array_equal(nan_g, nan_w):
        return "NaN positions differ"
    ok = ~nan_w
    with np.errstate(invalid="ignore"):  # inf - inf: judged by inf_mismatch below
        diff = np.abs(g[ok] - w[ok])
    lim = atol + rtol * np.abs(w[ok])
    inf_mismatch = np.isinf(w[ok]) & (g[ok] != w[ok])
    bad = np.count_nonzero((diff > lim) | inf_mismatch)
    if bad == 0:
        return None
    worst = float(np.max(np.where(np.isfinite(diff), diff, 0))) if diff.size else 0.0
    return f"{bad} of {want.size} elements off (max abs diff {worst:.3g})"


def run_test(args, name, test_dir, work_root):
    """Returns a result dict for one node test."""
    res = {"test": name, "op": None, "status": None, "reason": ""}
    if args.time_limit and time.time() > args.deadline:
        res.update(status="skipped", reason=f"not run: the {args.time_limit:g} s time limit was reached")
        return res
    model_path = os.path.join(test_dir, "model.onnx")
    try:
        model = onnx.load(model_path)
    except Exception as e:  # a test the installed onnx cannot even load
        res.update(status="skipped", reason=f"onnx cannot load the model: {e}")
        return res
    ops = ops_of(model)
    res["op"] = ops[0] if len(ops) == 1 else (name_to_op(name) or (ops[0] if ops else "?"))
    reason = skip_reason(model)
    if reason:
        res.update(status="skipped", reason=reason)
        return res
    work = tempfile.mkdtemp(prefix=sanitize(name) + "_", dir=work_root)
    try:
        tsr = os.path.join(work, "model.tsr")
        st, out = run_cli([args.tessera, "convert", model_path, "-o", tsr])
        if st != "ok":
            classify_error(res, st, out, "convert")
            return res
        init_names = {i.name for i in model.graph.initializer}
        in_types = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
        in_names = [i.name for i in model.graph.input if i.name not in init_names]
        out_names = [o.name for o in model.graph.output]
        rtol, atol, _ = TOLERANCE.get(name, (DEFAULT_RTOL, DEFAULT_ATOL, ""))
        sets = sorted(d for d in os.listdir(test_dir) if d.startswith("test_data_set_"))
        for ds in sets:
            ds_dir = os.path.join(test_dir, ds)
            # Inputs and outputs travel as ONNX TensorProto files, which hold every dtype
            # (bfloat16, float8, int4 included); the test's own input_*.pb go in unchanged.
            cmd = [args.tessera, "run", tsr, "--backend", args.backend, "-o", os.path.join(work, ds),
                   "--output-format", "pb"]
            if args.backend != "cpu":
                cmd.append("--verbose")  # the placements: did the node run on the backend?
            for k, in_name in enumerate(in_names):
                pb = os.path.join(ds_dir, f"input_{k}.pb")
                if not os.path.exists(pb):
                    continue  # an optional input the test leaves out
                pb = retag_bfloat16_input(pb, in_types.get(in_name), os.path.join(work, f"{ds}_in{k}.pb"))
                cmd += ["--input", f"{in_name}={pb}"]
            st, out = run_cli(cmd)
            if st != "ok":
                classify_error(res, st, out, "run")
                return res
            if args.backend != "cpu":
                res["on_backend"] = res.get("on_backend", False) or f"-> {args.backend}" in out
            for k, out_name in enumerate(out_names):
                declared = model.graph.output[k].type.tensor_type.elem_type
                want = comparable(onnx.load_tensor(os.path.join(ds_dir, f"output_{k}.pb")), declared)
                path = os.path.join(work, ds, sanitize(out_name) + ".pb")
                if not os.path.exists(path):
                    res.update(status="failed", reason=f"{ds}: output '{out_name}' was not written")
                    return res
                problem = compare(comparable(onnx.load_tensor(path), declared), want, rtol, atol)
                if problem:
                    res.update(status="failed", reason=f"{ds} output '{out_name}': {problem}")
                    return res
        res["status"] = "passed"
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)


def classify_error(res, st, out, stage):
    if st in ("crash", "hang"):
        res.update(status="failed", crash=True, reason=f"{stage}: {st}: {error_line(out)}")
    elif "UNIMPLEMENTED" in out:
        res.update(status="unsupported", reason=f"{stage}: {error_line(out)}")
    else:
        res.update(status="failed", reason=f"{stage}: {error_line(out)}")


_BASE_OPS = {}


def name_to_op(name):
    return _BASE_OPS.get(re.sub(r"_expanded.*$", "", name))


def write_markdown(path, results, summary, args):
    by_op = collections.defaultdict(list)
    for r in results:
        by_op[r["op"] or "?"].append(r)
    lines = [f"# ONNX node tests on Tessera's `{args.backend}` backend", "", summary, "",
             "| op | passed | failed | unsupported | skipped | not passing (reason) |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    for op in sorted(by_op):
        rs = by_op[op]
        c = collections.Counter(r["status"] for r in rs)
        notes = "<br>".join(f"`{r['test']}`: {r['status']}: {r['reason']}".replace("|", "\\|")
                            for r in rs if r["status"] != "passed")
        lines.append(f"| {op} | {c['passed']} | {c['failed']} | {c['unsupported']} | {c['skipped']} | {notes} |")
    if TOLERANCE:
        lines += ["", "Tolerance overrides:", ""] + [f"- `{t}`: rtol {r}, atol {a}: {why}" for t, (r, a, why) in TOLERANCE.items()]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--work-dir", default=None)
    ap.add_argument("--filter", default=None, help="only tests whose name matches this regex")
    ap.add_argument("--ops", default=None,
                    help="comma-separated ONNX op types: only the tests of these ops (and their _expanded forms)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--md-out", default=None)
    ap.add_argument("--time-limit", type=float, default=0,
                    help="seconds; tests not started by then are reported as skipped (0: no limit)")
    args = ap.parse_args()
    args.deadline = time.time() + args.time_limit

    data_dir = args.data_dir or default_data_dir()
    if not os.path.isdir(data_dir):
        print(f"SKIP: no node tests at {data_dir} (the onnx wheel carries them; or give --data-dir)")
        return 77
    names = sorted(d for d in os.listdir(data_dir) if os.path.isfile(os.path.join(data_dir, d, "model.onnx")))
    for n in names:  # the op of each non-expanded single-node test, for grouping expanded ones
        if "_expanded" not in n:
            try:
                m = onnx.load(os.path.join(data_dir, n, "model.onnx"), load_external_data=False)
                if len(m.graph.node) == 1:
                    _BASE_OPS[n] = m.graph.node[0].op_type
            except Exception:
                pass
    if args.filter:
        names = [n for n in names if re.search(args.filter, n)]
    if args.ops:
        wanted = set(args.ops.split(","))
        names = [n for n in names if name_to_op(n) in wanted]
    work_root = args.work_dir or tempfile.mkdtemp(prefix="tessera_conformance_")
    os.makedirs(work_root, exist_ok=True)
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda n: run_test(args, n, os.path.join(data_dir, n), work_root), names))
    counts = collections.Counter(r["status"] for r in results)
    crashes = [r for r in results if r.get("crash")]
    summary = (f"conformance ({args.backend}, onnx {onnx.__version__}): {counts['passed']} passed, "
               f"{counts['failed']} failed, {counts['unsupported']} unsupported, {counts['skipped']} skipped, "
               f"out of {len(results)}")
    if args.backend != "cpu":
        on = sum(1 for r in results if r["status"] == "passed" and r.get("on_backend"))
        summary += f"; {on} of the passed ran at least one node on {args.backend} (the rest fell back to the CPU)"
    timed_out = sum(1 for r in results if r["status"] == "skipped" and "time limit" in r["reason"])
    if timed_out:
        summary += f"; {timed_out} not run (time limit)"
    eligible = len(results) - counts["skipped"]
    rate = f"{100.0 * counts['passed'] / eligible:.1f}%" if eligible else "n/a"
    if args.json_out:
        with open(args.json_out + ".tmp", "w") as f:
            json.dump({"summary": summary, "pass_rate_of_eligible": rate, "onnx": onnx.__version__,
                       "backend": args.backend, "results": results}, f, indent=1)
        os.replace(args.json_out + ".tmp", args.json_out)
    if args.md_out:
        write_markdown(args.md_out, results, summary + f" ({rate} of the {eligible} tests not skipped pass)", args)
    for r in crashes:
        print(f"CRASH/HANG: {r['test']}: {r['reason']}")
    print(f"{len(crashes)} crashes or hangs; pass rate {rate} of {eligible} eligible tests; {time.time() - start:.0f} s")
    print(summary)
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
