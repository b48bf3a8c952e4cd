"""Markov renewal engine at today's bandwidth-delay products (issue 16; measures, never asserts).

Family (Delta, B_max, W_max) = (W/4, W/16, W), INSTCAP, psi 20: 7 W_max - 1 states.
For each size: exact count, build (skeleton only, count excluded), assembly, structured
solve, nonzeros of P and build seconds per nonzero; the pre-issue-16 builder
(``tests/_markov_reference.py``) is timed on the same chain in the same run, interleaved,
up to ``--old-max`` states.  Best of ``--repeat`` (default 3).  Then the Fig. 8 + Fig. 9
sweep (120 chains) and, in a fresh subprocess each, the peak RSS of one ``analyze`` at
the largest sizes.

    python benchmarks/bench_markov_scale.py [--repeat 3] [--old-max 224000] [--sizes W,...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from _markov_reference import build_skeleton as old_build  # noqa: E402

from tcpabr_model.markov import Scenario, analyze, sweep_psi  # noqa: E402
from tcpabr_model.markov import skeleton as skmod  # noqa: E402
from tcpabr_model.markov.kernels.enumeration import build_skeleton  # noqa: E402
from tcpabr_model.markov.estimate import _kernel_args, estimate_chain  # noqa: E402
from tcpabr_model.markov.solvers import stationary_distribution  # noqa: E402

RSS_SNIPPET = """
import sys, time
from tcpabr_model.markov import Scenario, analyze
d, b, w = map(int, sys.argv[1:4])
t0 = time.perf_counter()
r = analyze(Scenario(delta=d, bmax=b, wmax=w))
hwm = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
print(r.n_states, r.nnz, time.perf_counter() - t0, hwm / 2**20)
"""
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across fork + exec, so a child of this
# process would report this process's own peak


def best(fn, repeat):
    out, t = None, np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--old-max", type=int, default=224_000, help="time the old builder up to this many states")
    ap.add_argument("--old-repeat", type=int, default=None,
                    help="repeats of the old builder above 60000 states (default --repeat; it takes minutes there)")
    ap.add_argument("--sizes", default="1440,4000,8000,16000,32000,64000,144000")
    ap.add_argument("--rss-sizes", default="32000,144000")
    ap.add_argument("--only-rss", action="store_true", help="only the peak-memory runs")
    args = ap.parse_args(argv)
    old_repeat = args.old_repeat or args.repeat

    if args.only_rss:
        args.sizes, args.repeat = "", 0
    analyze(Scenario(delta=4, bmax=2, psi=2, wmax=8))  # compile
    analyze(Scenario(delta=4, bmax=2, psi=2, wmax=8, feedback="none"))
    if not args.only_rss:
        old_build(*_kernel_args(Scenario(delta=4, bmax=2, wmax=8).structure_key()), 10**6)

    psis = np.geomspace(1, 200, 30)
    ts = []
    for _ in range(args.repeat):
        skmod._CACHE.clear()
        t0 = time.perf_counter()
        n = 0
        for fb in ("instcap", "none"):
            for b in (10, 12):
                n += len(sweep_psi(Scenario(delta=40, bmax=b, wmax=128, feedback=fb), psis))
        ts.append(time.perf_counter() - t0)
    if ts:
        print(f"Fig. 8 + Fig. 9 sweep: {4 * len(psis)} chains in {min(ts):.2f} s (best of {args.repeat}; "
              f"runs {', '.join(f'{t:.2f}' for t in ts)})\n")

    head = ("| Delta, B_max, W_max | states | nonzeros | count s | build s | build ns/nonzero | "
            "assemble s | solve s | total s | old build s | old / new build |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for w in (int(x) for x in args.sizes.split(",") if x):
        sc = Scenario(delta=w // 4, bmax=w // 16, wmax=w, max_states=10**8)
        key = sc.structure_key()
        kargs = _kernel_args(key)
        t_count = t_build = t_old = np.inf
        n_states = None
        for _ in range(args.repeat):  # interleaved: count, new build, old build
            t_count = min(t_count, best(lambda: estimate_chain(sc), 1)[0])
            tb, out = best(lambda: build_skeleton(*kargs, 10**8, False, None, 0.0), 1)
            t_build = min(t_build, tb)
            n_states = out[0].shape[0]
            if n_states <= args.old_max and (_ < old_repeat or n_states <= 60_000):
                t_old = min(t_old, best(lambda: old_build(*kargs, 10**8), 1)[0])
        skmod._CACHE.clear()
        sk = skmod._build(key, 10**8)
        p = sc.p_switch
        t_asm, P = best(lambda: sk.transition_matrix(p, p), args.repeat)
        t_solve, _ = best(lambda: stationary_distribution(sk, p, p, P=P), args.repeat)
        total = t_count + t_build + t_asm + t_solve
        old = f"{t_old:.2f} | {t_old / t_build:.0f}x" if np.isfinite(t_old) else "n/a | n/a"
        print(f"| {w // 4}, {w // 16}, {w} | {n_states} | {P.nnz:.3g} | {t_count:.2f} | {t_build:.2f} | "
              f"{1e9 * t_build / P.nnz:.0f} | {t_asm:.2f} | {t_solve:.2f} | {total:.2f} | {old} |",
              flush=True)
        del sk, P

    print("\npeak RSS of one analyze() in a fresh process:")
    for w in (int(x) for x in args.rss_sizes.split(",")):
        out = subprocess.run([sys.executable, "-c", RSS_SNIPPET, str(w // 4), str(w // 16), str(w)],
                             capture_output=True, text=True, check=True).stdout.split()
        print(f"  ({w // 4}, {w // 16}, {w}): {out[0]} states, {float(out[1]):.3g} nonzeros, "
              f"{float(out[2]):.1f} s, peak RSS {float(out[3]):.2f} GB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
