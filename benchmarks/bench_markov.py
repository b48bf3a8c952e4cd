"""Benchmark of the Markov renewal engine (a script, not a test: it measures, never asserts).

For growing (delta, bmax, wmax) it reports states, nonzeros, skeleton build time,
assembly time, peak memory, and the stationary solve of the *same matrix* by the
project's structured solver and by the general methods a user would otherwise write:
dense numpy, scipy's sparse direct solver done well (one component fixed, its row and
column dropped), power iteration to 1e-12 and quantecon's MarkovChain (dense GTH) where
dense still fits.  Also times the whole Fig. 8 + Fig. 9 sweep.

    python benchmarks/bench_markov.py [--quick] [--markdown]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np

from tcpabr_model.markov import Scenario, analyze, skeleton_for, stationary_distribution, sweep_psi

DENSE_MAX = 9000       # states: dense numpy / quantecon beyond this take minutes
POWER_MAX_SECONDS = 60


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def chain_mb(sk, P) -> float:
    """Memory held by the skeleton arrays and the CSR matrix, in MB."""
    arrays = [v for v in vars(sk).values() if isinstance(v, np.ndarray)]
    return (sum(a.nbytes for a in arrays) + P.data.nbytes + P.indices.nbytes + P.indptr.nbytes) / 2**20


def time_method(sk, p, P, method, repeat=3):
    best = np.inf
    sol = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        sol = stationary_distribution(sk, p, p, method=method, P=P)
        best = min(best, time.perf_counter() - t0)
    return best, sol


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--psi", type=float, default=20.0)
    args = ap.parse_args(argv)

    # warm-up: compile the numba kernels
    analyze(Scenario(delta=4, bmax=2, psi=2, wmax=8))
    analyze(Scenario(delta=4, bmax=2, psi=2, wmax=8, feedback="none"))

    # 1. the Fig. 8 + Fig. 9 sweep
    psis = np.geomspace(1, 200, 30)
    t0 = time.perf_counter()
    n = 0
    for fb in ("instcap", "none"):
        for b in (10, 12):
            n += len(sweep_psi(Scenario(delta=40, bmax=b, wmax=128, feedback=fb), psis))
    print(f"Fig. 8 + Fig. 9 sweep: {n} chains (2 feedbacks x 2 buffers x 30 psi) in "
          f"{time.perf_counter() - t0:.2f} s after compilation\n")

    sizes = [(40, 10, 128), (80, 20, 256), (160, 40, 512), (400, 100, 1280), (400, 100, 2000),
             (800, 200, 4000), (2000, 500, 4000)]
    if args.quick:
        sizes = sizes[:3]
    methods = ["structured", "sparse-direct", "power", "dense", "quantecon"]
    head = ("| feedback | delta | bmax | wmax | states | nonzeros | build s | assemble s | chain MB | peak RSS MB | "
            + " | ".join(f"{m} s" for m in methods) + " | speed-up vs best general | residual |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for fb in ("instcap", "none"):
        for delta, bmax, wmax in sizes:
            sc = Scenario(delta=delta, bmax=bmax, psi=args.psi, wmax=wmax, feedback=fb)
            t0 = time.perf_counter()
            sk = skeleton_for(sc)
            t_build = sk.build_seconds
            p = sc.p_switch
            t0 = time.perf_counter()
            P = sk.transition_matrix(p, p)
            t_asm = time.perf_counter() - t0
            times = {}
            res = None
            ref = None
            for m in methods:
                if m in ("dense", "quantecon") and sk.n_states > DENSE_MAX:
                    times[m] = None
                    continue
                if m == "power" and sk.n_states > 20000:
                    times[m] = None
                    continue
                t, sol = time_method(sk, p, P, m, repeat=1 if m in ("dense", "quantecon", "power") else 3)
                times[m] = t
                if m == "structured":
                    res = sol.residual
                    ref = sol.pi
                else:
                    err = np.abs(sol.pi - ref).sum()
                    assert err < 1e-8, (m, err)  # sanity: all methods solve the same chain
            general = [t for m, t in times.items() if m != "structured" and t is not None]
            speed = min(general) / times["structured"]
            cells = " | ".join("n/a" if times[m] is None else f"{times[m]:.4f}" for m in methods)
            print(f"| {fb} | {delta} | {bmax} | {wmax} | {sk.n_states} | {P.nnz} | {t_build:.3f} | "
                  f"{t_asm:.4f} | {chain_mb(sk, P):.1f} | {peak_rss_mb():.0f} | {cells} | {speed:.0f}x | {res:.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
