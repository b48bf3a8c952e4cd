"""Cost of ``analyze(..., window_tail=1e-12)`` (docs/model.md sec. 19) against the chain of the
scenario's own window cap, same machine, same run (a script: it measures, never asserts).

Each case runs full / searched alternately ``--repeat`` times with the skeleton cache cleared
(count + build + solve of every chain the search tries: what one new point costs); the best is
reported with the states of the full chain and of the chain accepted, the caps tried and the
largest relative difference of the prediction, both bounds and both occupancies.

The cases: the paper's link (Delta 40, B_max 10, psi 20) with the window cap 128 and 400, and
with ``--traces`` the trace study's measured links (INSTCAP and TCP alone at a few of its
points: the fit on half A at RTT 100 and 50 ms, 0.5 BDP; ``../shared/traces``).

    python benchmarks/bench_markov_window_tail.py [--repeat 2] [--traces DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.markov import skeleton as _skeleton

KEYS = ("prediction", "optimistic", "conservative", "mean_queue", "mean_source_buffer")


def _paper_cases():
    for fb in ("instcap", "none"):
        for wmax in (128, 400):
            yield f"paper's link, {fb}, W_max {wmax}", Scenario(delta=40, bmax=10, psi=20, wmax=wmax, feedback=fb)


def _trace_cases(folder: Path):
    from tcpabr_model.capacity import read_trace
    from tcpabr_model.trace_study import fit_link, link_scenario, trace_halves, window_packets

    for name, rtt in (("Verizon-LTE-short.down", 0.1), ("TMobile-UMTS-driving.down", 0.1),
                      ("Verizon-LTE-short.down", 0.05)):
        half_a, half_b = trace_halves(read_trace(folder / name))
        link = fit_link(half_a, rtt, patterns=4)
        bmax = max(1, int(round(0.5 * half_b.mean_rate * rtt)))
        wmax = window_packets(float(np.max(link.model.levels)), rtt, bmax)
        for fb in ("instcap", "none"):
            yield (f"{name.split('.')[0]} A, {rtt * 1000:.0f} ms, 0.5 BDP, {fb}",
                   link_scenario(link, bmax, fb, wmax=wmax, max_states=20_000_000))


def one(sc, tail):
    _skeleton._CACHE.clear()
    t0 = time.perf_counter()
    r = analyze(sc, window_tail=tail)
    return time.perf_counter() - t0, r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--traces", type=Path, default=None, help="folder of the shared traces (the study's links)")
    args = ap.parse_args(argv)
    analyze(Scenario(delta=8, bmax=2, psi=2, wmax=16), window_tail=1e-12)    # compile the kernels
    cases = list(_paper_cases()) + (list(_trace_cases(args.traces)) if args.traces else [])
    print(f"best of {args.repeat}, cache cleared; tail 1e-12\n")
    print("| case | W_max | states: full / searched | caps tried | share at the cap | full s | searched s "
          "| largest relative difference |")
    print("|---|---|---|---|---|---|---|---|")
    for label, sc in cases:
        runs = [[one(sc, tail) for tail in (None, 1e-12)] for _ in range(args.repeat)]
        tf, ts = (min(rep[k][0] for rep in runs) for k in (0, 1))
        f, s = runs[-1][0][1], runs[-1][1][1]
        diff = max(abs(getattr(s, k) - getattr(f, k)) / max(abs(getattr(f, k)), 1e-300) for k in KEYS)
        tries = ", ".join(str(t["wmax"]) for t in s.scenario["window_tries"])
        print(f"| {label} | {sc.wmax} | {f.n_states:,} / {s.n_states:,} | {tries} | {s.window_cap_share:.1e} | "
              f"{tf:.3f} | {ts:.3f} | {diff:.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
