#!/usr/bin/env python3
"""Fits the polynomial E of the CPU Gelu (backends/cpu/elementwise_simd.h, gelu_erf):

    erfc(t) = u E(u) exp(-t^2),  u = 1 / (1 + t),  E(u) = erfcx(t) / u,

E of degree 12 in (u - c) on u in [1/(1 + 10.5), 1] (t in [0, 10.5]), c the interval's
middle rounded to float. Least squares on Chebyshev nodes for the relative error, then
reweighted (Lawson's iteration) toward the minimax error, then the coefficients rounded to
float. Prints the maximum relative error before the rounding and the C++ lines of the
polynomial (elementwise_simd.h's horner, highest degree first). A development tool: needs
numpy and scipy (not in scripts/requirements.txt).

    python3 scripts/fit_gelu_erfcx.py [--degree 12] [--t-max 10.5]
"""
import argparse

import numpy as np
from scipy.special import erfcx


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--degree", type=int, default=12)
    ap.add_argument("--t-max", type=float, default=10.5)
    ap.add_argument("--nodes", type=int, default=6000)
    a = ap.parse_args()
    u_min = 1 / (1 + a.t_max)
    s = np.cos(np.pi * (np.arange(a.nodes) + 0.5) / a.nodes)
    u = u_min + (1 - u_min) * (s + 1) / 2
    t = 1 / u - 1
    e = erfcx(t) / u
    c = float(np.float32((u_min + 1) / 2))
    p = np.polyfit(u - c, e, a.degree, w=1 / e)
    w = np.ones_like(u)
    for _ in range(60):  # Lawson: weight each node by its share of the largest error
        r = (np.polyval(p, u - c) - e) / e
        w = w * np.sqrt(np.abs(r) / np.abs(r).max()) + 1e-12
        w /= w.max()
        p = np.polyfit(u - c, e, a.degree, w=np.sqrt(w) / e)
    err = np.abs((np.polyval(p, u - c) - e) / e).max()
    pf = p.astype(np.float32)
    print(f"// degree {a.degree}, u in [{u_min:.9g}, 1], c = {c:.9e}: max relative error {err:.2e} before rounding")
    print(f"  const F v = V::sub(u, V::set1({c:.9e}f));")
    print("  const F e = horner<V>(v, {" + ", ".join(f"{x:.9e}f" for x in pf) + "});")


if __name__ == "__main__":
    main()
