"""Time per point of the Markov renewal engine with K capacity levels (issue 15 item 2).

A script, not a test: it measures, never asserts.  At Delta 40, B_max 10, W_max 128 it
times ``analyze`` for today's two-state scenario (psi 20, rate ratio 0.5), the same chain
given as a CapacityModel (``two_state``), and two K = 8 chains (levels 1 .. 0.3 evenly
spaced, mean sojourn 50 round trips in each level): one that jumps to any level
("dense", every entry of the 8 x 8 matrix positive) and a birth-death chain (jumps to the
neighbouring levels only).  "cold" = first point (state count + build + solve; the numba
kernels compiled beforehand), "warm" = a further point with the same levels (the skeleton
is cached: a sweep over matrices, or over psi), best of ``--repeat``.

    python benchmarks/bench_markov_kstate.py [--repeat 3] [--markdown]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tcpabr_model.capacity import from_arrays, two_state
from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.markov import skeleton as skeleton_mod


def k8(kind: str):
    lev = np.linspace(1.0, 0.3, 8)
    if kind == "dense":
        P = np.full((8, 8), 0.02 / 7)
    else:
        P = np.zeros((8, 8))
        for i in range(8):
            nb = [j for j in (i - 1, i + 1) if 0 <= j < 8]
            P[i, nb] = 0.02 / len(nb)
    np.fill_diagonal(P, 0.98)
    return from_arrays(lev, P, epoch=40.0)


def cases():
    base = dict(delta=40, bmax=10, wmax=128)
    for fb in ("instcap", "none", "constant"):
        kw = dict(base, feedback=fb, **({"source_rate": 0.6} if fb == "constant" else {}))
        yield "today (psi 20, rate ratio 0.5)", fb, Scenario(psi=20, rate_ratio=0.5, **kw)
        yield "K = 2 (two_state model)", fb, Scenario(capacity=two_state(0.5, 20, 40), **kw)
        yield "K = 8 dense", fb, Scenario(capacity=k8("dense"), **kw)
        yield "K = 8 birth-death", fb, Scenario(capacity=k8("bd"), **kw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    # compile every kernel (both solve paths) on tiny chains first
    for sc in (Scenario(delta=4, bmax=2, wmax=8), Scenario(delta=4, bmax=2, wmax=8, feedback="none"),
               Scenario(delta=4, bmax=2, wmax=8, capacity=from_arrays([1.0, 0.5, 0.25], np.full((3, 3), 1 / 3),
                                                                      epoch=4.0))):
        analyze(sc)
    rows = []
    for name, fb, sc in cases():
        skeleton_mod._CACHE.clear()
        t0 = time.perf_counter()
        r = analyze(sc)
        cold = time.perf_counter() - t0
        warm = np.inf
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            analyze(sc)
            warm = min(warm, time.perf_counter() - t0)
        rows.append((name, fb, r.n_states, r.nnz, cold, warm, r.optimistic, r.conservative, r.method))
    head = ("| chain | feedback | states | nonzeros | cold s | warm s | optimistic | conservative | solver |\n"
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    print(head if args.markdown else "chain, feedback, states, nnz, cold s, warm s, opt, cons, solver")
    for name, fb, n, nnz, cold, warm, o, c, m in rows:
        if args.markdown:
            print(f"| {name} | {fb} | {n:,} | {nnz:,} | {cold:.3f} | {warm:.3f} | {o:.4f} | {c:.4f} | {m} |")
        else:
            print(f"{name}, {fb}, {n}, {nnz}, {cold:.3f}, {warm:.3f}, {o:.4f}, {c:.4f}, {m}")


if __name__ == "__main__":
    main()
