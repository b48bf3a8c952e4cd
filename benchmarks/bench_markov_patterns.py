"""Cost of TCP alone's chain over a measured link's within-epoch service patterns (docs/model.md
sec. 11, issue 23 target "each analysis <= 10 s on 2 cores"; a script: it measures, never
asserts).

The link: the first half of a trace (default Verizon-LTE-short.down) fitted at rtt 50 ms with 8
patterns per level (``trace_study.fit_link``), TCP alone (``feedback='none'``) at
``(B_max, W_max)`` = (12, 143) and (47, 213).  Each point is one ``analyze`` with the skeleton
cache cleared: "build s" is ``build_seconds`` (the exact state count and the build,
``skeleton_for``), then assembly and solve, and the wall time of the whole call.

``--baseline DIR`` times another checkout of the package (for example ``git worktree add
/tmp/old <commit>``) in the same run: each repeat runs the baseline and this tree alternately,
each in a fresh process with ``PYTHONPATH`` set to its tree (numba compiled beforehand by a
small analysis of the same link), and the best of the repeats is reported.

    python benchmarks/bench_markov_patterns.py [--baseline DIR] [--repeat 2] [--trace PATH] [--half 1|2]
        [--rtt S] [--points B_MAX:W_MAX,...]

``--half 2`` fits the second half instead; ``--points`` replaces the two default points (for
example the study's TMobile-LTE points: ``--trace .../TMobile-LTE-short.down --points 41:440``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
POINTS = [(12, 143), (47, 213)]
DEFAULT_TRACE = "/work/shared/traces/Verizon-LTE-short.down"


def measure(trace: str, rtt: float, patterns: int, points=POINTS, half: int = 1) -> list[dict]:
    """One process: every point once, after a small analysis that compiles the kernels."""
    import time

    from tcpabr_model.capacity import read_trace
    from tcpabr_model.markov import analyze
    from tcpabr_model.markov import skeleton as _skeleton
    from tcpabr_model.trace_study import fit_link, link_scenario, trace_halves

    link = fit_link(trace_halves(read_trace(trace))[half - 1], rtt, patterns=patterns)
    analyze(link_scenario(link, 2, "none", wmax=16))     # compile (or load) the kernels
    out = []
    for bmax, wmax in points:
        _skeleton._CACHE.clear()
        t0 = time.perf_counter()
        r = analyze(link_scenario(link, bmax, "none", wmax=wmax))
        out.append({"bmax": bmax, "wmax": wmax, "states": r.n_states, "build": r.build_seconds,
                    "assemble": r.assemble_seconds, "solve": r.solve_seconds,
                    "total": time.perf_counter() - t0, "prediction": r.prediction.hex()})
    return out


def run_tree(tree: Path, args) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--trace", args.trace, "--rtt", str(args.rtt),
           "--patterns", str(args.patterns), "--points", args.points, "--half", str(args.half)]
    res = subprocess.run(cmd, env=env, cwd=str(tree), capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, help="another checkout of the package, timed in the same run")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--trace", default=DEFAULT_TRACE)
    ap.add_argument("--rtt", type=float, default=0.05)
    ap.add_argument("--patterns", type=int, default=8)
    ap.add_argument("--half", type=int, choices=(1, 2), default=1)
    ap.add_argument("--points", default=",".join(f"{b}:{w}" for b, w in POINTS))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    points = [tuple(int(v) for v in p.split(":")) for p in args.points.split(",")]
    if args.child:
        print(json.dumps(measure(args.trace, args.rtt, args.patterns, points, args.half)))
        return 0
    trees = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this tree", HERE)]
    best: dict[tuple, dict] = {}
    for _ in range(args.repeat):
        for name, tree in trees:
            for row in run_tree(tree, args):
                key = (name, row["bmax"])
                if key not in best or row["total"] < best[key]["total"]:
                    best[key] = row
    print("| tree | B_max, W_max | states | build s | assemble s | solve s | total s | prediction |")
    print("|---|---|---|---|---|---|---|---|")
    for bmax, wmax in points:
        for name, _ in trees:
            r = best[(name, bmax)]
            print(f"| {name} | {bmax}, {wmax} | {r['states']} | {r['build']:.2f} | {r['assemble']:.2f} | "
                  f"{r['solve']:.2f} | {r['total']:.2f} | {r['prediction']} |")
    if args.baseline:
        for bmax, _ in points:
            a, b = best[("baseline", bmax)], best[("this tree", bmax)]
            same = "same prediction bit for bit" if a["prediction"] == b["prediction"] else "PREDICTION DIFFERS"
            print(f"B_max {bmax}: build {a['build'] / b['build']:.1f}x faster, total {a['total'] / b['total']:.1f}x; "
                  f"{same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
