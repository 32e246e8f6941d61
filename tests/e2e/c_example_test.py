"""The C example (apps/examples/c) against the installed package, on a real model.

    c_example_test.py --build-dir BUILD --source-dir ROOT --host-tessera BIN --models-dir DIR
                      --work-dir DIR [--toolchain FILE --cc CC --emulator "qemu-aarch64 -L ..."]

1. `cmake --install BUILD --prefix WORK/prefix`, then checks that the installed
   libtessera.so needs nothing beyond libc, libm, libstdc++, libgcc_s, libpthread, libdl,
   librt and the dynamic loader (readelf -d), and that it exports only tsr_* symbols.
2. Builds apps/examples/c/tessera_classify.c three ways against that prefix: find_package
   with the shared library, find_package with the static library (TESSERA_EXAMPLE_STATIC),
   and `CC -std=c99 -Wall -Wextra -Werror ... $(pkg-config --cflags --libs tessera)`.
   With --toolchain/--cc the builds are cross builds (e.g. aarch64) and --emulator runs them.
3. Converts the PP-OCR direction classifier with the host's `tessera convert`, makes its real
   input (scripts/demo/prepare_inputs.py), runs the host's `tessera run` on it as the
   reference, and runs each example build on the same .npy.

Right looks like: every build prints output 0's name and shape as `tessera run` writes it,
every value of the output (all are printed: -k is larger than the output) within a relative
error of 1e-5 of the reference (host and target kernels sum in different orders), and the
top-1 index equal to the reference's argmax. Any missing piece (model, compiler, emulator)
fails with the reason, except a missing model or venv on a host build, which skips (77).
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "demo"))

REL_TOL = 1e-5
TIMEOUT_S = 900
ALLOWED_NEEDED = re.compile(r"^(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so\.\d+$|^ld-linux[-\w.]*\.so\.\d+$")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(cmd, what, env=None, cwd=None):
    print("$ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT_S, env=env, cwd=cwd)
    except FileNotFoundError as e:
        fail(f"{what}: {e}")
    except subprocess.TimeoutExpired:
        fail(f"{what}: no exit within {TIMEOUT_S} s")
    out = p.stdout.decode("utf-8", "replace").strip()
    if out:
        print("  " + out[-4000:].replace("\n", "\n  "))
    if p.returncode != 0:
        fail(f"{what}: exit status {p.returncode}")
    return out


def parse_example(out, what):
    """(name, shape, {flat index: value}, top-1 index) from tessera_classify's stdout."""
    lines = out.splitlines()
    head = next((l for l in lines if l.startswith("output '")), None)
    if not head:
        fail(f"{what}: no 'output' line")
    m = re.match(r"output '(.*)' (\w+)\[([\d,]*)\]$", head)
    if not m:
        fail(f"{what}: cannot parse {head!r}")
    shape = [int(d) for d in m.group(3).split(",") if d]
    values, top1 = {}, None
    for l in lines:
        r = re.match(r"^(\d+) (\d+) (\S+)$", l)
        if r:
            values[int(r.group(2))] = float(r.group(3))
            if r.group(1) == "1":
                top1 = int(r.group(2))
    return m.group(1), m.group(2), shape, values, top1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", required=True, help="the build to install (host or cross)")
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--host-tessera", required=True, help="host tessera CLI with the converter")
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--toolchain", default="", help="CMake toolchain file of a cross build")
    ap.add_argument("--cc", default="gcc", help="C compiler of the pkg-config build")
    ap.add_argument("--emulator", default="", help="command line that runs a target program")
    ap.add_argument("--skip-missing", action="store_true", help="exit 77 when the model is missing")
    a = ap.parse_args()

    try:
        import numpy as np
        from compare import sanitize
        from prepare_inputs import model_inputs
        from real_models import MODELS
    except ImportError as e:
        fail(f"{e}: run with the Python of scripts/install_deps.sh (numpy, scikit-learn)")
    onnx = os.path.join(a.models_dir, MODELS["cls"][0])
    if not os.path.isfile(onnx):
        if a.skip_missing:
            print(f"SKIP: model {onnx} missing: run scripts/fetch_models.sh")
            sys.exit(77)
        fail(f"model {onnx} missing: run scripts/fetch_models.sh")
    emu = shlex.split(a.emulator)
    if emu and not shutil.which(emu[0]):
        fail(f"emulator {emu[0]} not found (Debian: qemu-user)")
    for tool in ("cmake", "pkg-config", "readelf", a.cc):
        if not shutil.which(tool):
            fail(f"{tool} not found")

    w = os.path.abspath(a.work_dir)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    prefix = os.path.join(w, "prefix")

    # 1. install, and what the installed shared library needs and exports.
    run(["cmake", "--install", a.build_dir, "--prefix", prefix], "cmake --install")
    libdir = next((os.path.join(prefix, d) for d in ("lib", "lib64") if os.path.isdir(os.path.join(prefix, d, "cmake"))), None)
    if not libdir:
        fail(f"no lib/cmake under {prefix}")
    so = os.path.join(libdir, "libtessera.so")
    for f in (so, os.path.join(libdir, "libtessera.a"), os.path.join(prefix, "include", "tessera", "tessera.h"),
              os.path.join(libdir, "cmake", "Tessera", "TesseraConfig.cmake"), os.path.join(libdir, "pkgconfig", "tessera.pc")):
        if not os.path.exists(f):
            fail(f"not installed: {f}")
    dyn = run(["readelf", "-d", so], "readelf -d")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    extra = [n for n in needed if not ALLOWED_NEEDED.match(n)]
    print(f"libtessera.so needs: {', '.join(needed)}")
    if extra:
        fail(f"libtessera.so depends on {extra}: only libc, libm, libstdc++, libgcc_s, pthread, dl, rt are allowed")
    syms = run(["readelf", "--dyn-syms", "-W", so], "readelf --dyn-syms")
    exported = [l.split()[-1] for l in syms.splitlines()
                if re.search(r"\b(FUNC|OBJECT)\s+GLOBAL\s+DEFAULT\s+\d+\s", l)]
    if not exported or any(not s.startswith("tsr_") for s in exported):
        fail(f"libtessera.so exports more than tsr_*: {[s for s in exported if not s.startswith('tsr_')][:10]}")
    print(f"libtessera.so exports {len(exported)} functions, all tsr_*")

    # 2. the example, three ways.
    src = os.path.join(a.source_dir, "apps", "examples", "c")
    cross = []
    if a.toolchain:
        # A cross toolchain searches packages only in its sysroot: name the package's folder.
        cross = [f"-DCMAKE_TOOLCHAIN_FILE={a.toolchain}", f"-DTessera_DIR={libdir}/cmake/Tessera"]
    binaries = {}
    for kind, extra_args in (("find_package", []), ("find_package_static", ["-DTESSERA_EXAMPLE_STATIC=ON"])):
        b = os.path.join(w, kind)
        run(["cmake", "-S", src, "-B", b, f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_BUILD_TYPE=Release", *cross,
             *extra_args], f"configure the example ({kind})")
        run(["cmake", "--build", b, "--verbose"], f"build the example ({kind})")
        binaries[kind] = os.path.join(b, "tessera_classify")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"))
    flags = run(["pkg-config", "--cflags", "--libs", "tessera"], "pkg-config", env=env).split()
    pc_bin = os.path.join(w, "pkg_config", "tessera_classify")
    os.makedirs(os.path.dirname(pc_bin))
    run([a.cc, "-std=c99", "-Wall", "-Wextra", "-Werror", os.path.join(src, "tessera_classify.c"), *flags,
         f"-Wl,-rpath,{libdir}", "-o", pc_bin], "build the example (pkg-config)")
    binaries["pkg_config"] = pc_bin

    # 3. the reference: the host's tessera on the same .tsr and .npy.
    tsr = os.path.join(w, "cls.tsr")
    run([a.host_tessera, "convert", onnx, "-o", tsr], "tessera convert")
    inputs = model_inputs("cls")
    if len(inputs) != 1:
        fail(f"cls has {len(inputs)} inputs")
    name, arr = next(iter(inputs.items()))
    npy = os.path.join(w, sanitize(name) + ".npy")
    np.save(npy, np.ascontiguousarray(arr, dtype=np.float32))
    ref_dir = os.path.join(w, "reference")
    run([a.host_tessera, "run", tsr, "--input", f"{name}={npy}", "--output-dir", ref_dir], "tessera run")
    ref_files = sorted(f for f in os.listdir(ref_dir) if f.endswith(".npy"))
    if not ref_files:
        fail("tessera run wrote no output")

    bad = []
    for kind, exe in binaries.items():
        out = run([*emu, exe, tsr, npy, "-k", "1000000", "-t", "1"], f"example ({kind})")
        oname, dtype, shape, values, top1 = parse_example(out, kind)
        ref_path = os.path.join(ref_dir, sanitize(oname) + ".npy")
        if not os.path.isfile(ref_path):
            fail(f"{kind}: output '{oname}' has no reference file (tessera run wrote {ref_files})")
        want = np.load(ref_path).astype(np.float64)
        got = np.full(want.size, np.nan)
        for i, v in values.items():
            if i < got.size:
                got[i] = v
        denom = np.linalg.norm(want)
        rel = np.linalg.norm(got - want.ravel()) / denom if denom > 0 else np.linalg.norm(got - want.ravel())
        ok = (shape == list(want.shape) and dtype == "float" and len(values) == want.size and
              bool(np.isfinite(rel)) and rel <= REL_TOL and top1 == int(np.argmax(want)))
        print(f"{'ok  ' if ok else 'FAIL'} {kind:<20} {dtype}{shape} values {len(values)}/{want.size} "
              f"rel {rel:.3e} (bound {REL_TOL:g}) top-1 {top1} (reference {int(np.argmax(want))})")
        if not ok:
            bad.append(kind)
    if bad:
        fail(f"example builds off the reference: {bad}")
    print("the C example matches tessera run, built with find_package (shared, static) and pkg-config")


if __name__ == "__main__":
    main()
