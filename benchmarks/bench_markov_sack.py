"""Cost of the fast-recovery chain (``Scenario(tcp='sack')``, docs/model.md sec. 12) against
the timeout-only engine on the same machine in the same run (a script: it measures, never
asserts).  Issue 25 targets: < 50 ms per point at the paper's size (Delta 40, B_max 10), and
within 2x of the timeout-only engine's time at 10^6 states.

Each (size, feedback) is run alternately timeout-only / sack ``--repeat`` times, each time
with the skeleton cache cleared (count + build + assembly + solve, what one new point costs);
the best of the repeats is reported.

    python benchmarks/bench_markov_sack.py [--repeat 2] [--no-large]
"""

from __future__ import annotations

import argparse
import time

from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.markov import skeleton as _skeleton

SIZES = [(40, 10, 128), (400, 100, 1600), (4000, 1000, 16000), (36000, 9000, 144000)]


def one(delta, bmax, wmax, fb, tcp):
    _skeleton._CACHE.clear()
    t0 = time.perf_counter()
    r = analyze(Scenario(delta=delta, bmax=bmax, psi=20, wmax=wmax, feedback=fb, tcp=tcp))
    return time.perf_counter() - t0, r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-large", action="store_true", help="skip the 10^6-state chain")
    args = ap.parse_args(argv)
    for tcp in ("timeout-only", "sack"):   # compile the kernels
        for fb in ("instcap", "none"):
            analyze(Scenario(delta=8, bmax=2, psi=2, wmax=16, feedback=fb, tcp=tcp))
    print("| feedback | delta, bmax, wmax | states | timeout-only s | sack s | ratio | sack prediction |")
    print("|---|---|---|---|---|---|---|")
    for delta, bmax, wmax in SIZES[:-1] if args.no_large else SIZES:
        for fb in ("instcap", "none"):
            if delta > 10000 and fb == "none":
                continue
            best = {"timeout-only": float("inf"), "sack": float("inf")}
            res = {}
            for _ in range(args.repeat):
                for tcp in best:
                    t, r = one(delta, bmax, wmax, fb, tcp)
                    best[tcp] = min(best[tcp], t)
                    res[tcp] = r
            print(f"| {fb} | {delta}, {bmax}, {wmax} | {res['sack'].n_states} | {best['timeout-only']:.4f} | "
                  f"{best['sack']:.4f} | {best['sack'] / best['timeout-only']:.2f} | {res['sack'].prediction:.4f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
