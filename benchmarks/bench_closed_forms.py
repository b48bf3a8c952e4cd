"""Benchmark the closed forms: effective capacity of large chains and the estimators.

Run:  python benchmarks/bench_closed_forms.py [--repeat 7]

Prints a markdown table (median of ``--repeat`` runs after one warm-up run that
includes numba compilation / sympy lambdify).  Measures only; asserts nothing.
Targets (issue 4): effective capacity of a 1000-state chain < 50 ms; estimators over
1e7 samples < 0.5 s.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without install
import tcpabr_model.closed_forms as cf  # noqa: E402


def timeit(fn, repeat):
    fn()  # warm-up: compilation, caches
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = []

    n = 1000
    A = rng.random((n, n))
    P_dense = A / A.sum(1, keepdims=True)
    c_dense = rng.random(n)
    rows.append(("effective_capacity, 1000-state dense random chain, delta=2",
                 timeit(lambda: cf.effective_capacity(P_dense, c_dense, 2.0), args.repeat)))
    rows.append(("  baseline: numpy.linalg.eigvals of P diag(e^{-delta c}) (dense LAPACK)",
                 timeit(lambda: np.max(np.abs(np.linalg.eigvals(P_dense * np.exp(-2.0 * c_dense)[None, :]))), args.repeat)))

    # sparse chain: random walk on a ring of 1000 capacity levels with 10 random jumps per state
    rows_i = np.repeat(np.arange(n), 12)
    cols = np.concatenate([np.stack([(np.arange(n) + 1) % n, (np.arange(n) - 1) % n], 1),
                           rng.integers(0, n, (n, 10))], 1).ravel()
    Ps = sp.csr_array((rng.random(rows_i.size), (rows_i, cols)), shape=(n, n))
    Ps = sp.csr_array(sp.diags_array(1 / np.asarray(Ps.sum(1)).ravel()) @ Ps)
    c_s = np.sin(np.arange(n) / 50.0) + 1.5
    rows.append(("effective_capacity, 1000-state sparse chain (12 nnz/row), delta=2",
                 timeit(lambda: cf.effective_capacity(Ps, c_s, 2.0), args.repeat)))
    # slowly mixing birth-death chain (spectral gap ~1e-5, Perron vector spanning ~1e-70)
    up = np.full(n - 1, 0.3)
    diag = 1 - np.r_[up, 0] - np.r_[0, up]
    Pbd = sp.csr_array(sp.diags_array([diag, up, up], offsets=[0, 1, -1]))
    c_bd = np.linspace(0.0, 1.0, n)
    rows.append(("effective_capacity, 1000-state birth-death chain (slow mixing), sparse, delta=0.1",
                 timeit(lambda: cf.effective_capacity(Pbd, c_bd, 0.1), args.repeat)))
    Pbd_dense = Pbd.toarray()
    rows.append(("  same chain given as a dense array",
                 timeit(lambda: cf.effective_capacity(Pbd_dense, c_bd, 0.1), max(1, args.repeat // 3))))
    d_grid = np.linspace(0.0, 50.0, 1_000_000)
    rows.append(("effective_capacity_two_state, 1e6 deltas (lambdified sympy, vectorised)",
                 timeit(lambda: cf.effective_capacity_two_state(0.1, 0.1, 1.0, 0.5, d_grid), args.repeat)))
    P2 = cf.two_state_matrix(0.05, 0.05)
    rows.append(("delta_for_rate, two-state chain (brentq on the spectral radius)",
                 timeit(lambda: cf.delta_for_rate(P2, [40.0, 20.0], 25.0), args.repeat)))

    x = rng.choice([1.0, 0.5], size=10_000_000)
    rows.append(("effcap_estimate eq.25, 1e7 samples, M=7, disjoint blocks",
                 timeit(lambda: cf.effcap_estimate(x, 7, 2.0), args.repeat)))
    rows.append(("effcap_estimate eq.25, 1e7 samples, M=7, sliding blocks",
                 timeit(lambda: cf.effcap_estimate(x, 7, 2.0, sliding=True), args.repeat)))
    rows.append(("effcap_min_block_average eq.28, 1e7 samples, M=7 sliding",
                 timeit(lambda: cf.effcap_min_block_average(x, 7), args.repeat)))
    rows.append(("effcap_feedback_series eq.28 at every epoch, 1e7 samples, M=7, N=49",
                 timeit(lambda: cf.effcap_feedback_series(x, 7, 49), args.repeat)))

    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, numpy {np.__version__}")
    print()
    print("| case | median time |")
    print("| --- | --- |")
    for name, t in rows:
        unit = f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"
        print(f"| {name} | {unit} |")


if __name__ == "__main__":
    main()
