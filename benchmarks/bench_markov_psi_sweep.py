"""Cost of a point in a psi sweep at the paper's size (issue 25: < 50 ms per point; Delta 40,
B_max 10, W_max 128), the way the Fig. 8/9 grid and ``sweep_psi`` run it: the skeleton does not
depend on psi, so it is built once ("first s": count + build + solve of the first psi, what a new
point costs) and every other psi of the grid (1.5-1000) reuses it ("per point": median and
largest).  A script: it measures, never asserts.

``--baseline DIR`` (repeatable) times another checkout (``git worktree add /tmp/old <commit>``)
in the same run: each repeat runs the trees alternately, each in a fresh process with
``PYTHONPATH`` set to it (the kernels compiled first by a small analysis); the best of the
repeats is reported, and the predictions and bounds of every psi are compared.

    python benchmarks/bench_markov_psi_sweep.py [--baseline DIR ...] [--repeat 2] [--cases SPEC ...]

``SPEC`` is ``tcp:feedback:switch_time:ca_increment[:ack_clock]`` (default: both TCPs and feedbacks
with ``'uniform'`` and the counter, and ``'epoch'`` with the paper's coins; ``ack_clock`` TCP alone's,
docs/model.md sec. 3a, given only where it is not the default, so that older trees run the defaults).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from _trees import named_trees, run_child

HERE = Path(__file__).resolve().parent.parent
PSI = [1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]   # validity.FIG89_GRID
CASES = [f"{tcp}:{fb}:uniform:counter" for tcp in ("timeout-only", "sack") for fb in ("none", "instcap")] + \
    [f"{tcp}:{fb}:epoch:binomial" for tcp in ("timeout-only", "sack") for fb in ("none", "instcap")]


def measure(cases: list[str]) -> list[dict]:
    """One process: each case's sweep once, after a small analysis that compiles the kernels."""
    import time

    from tcpabr_model.markov import Scenario, analyze
    from tcpabr_model.markov import skeleton as _skeleton

    for fb in ("none", "instcap"):
        analyze(Scenario(delta=8, bmax=2, psi=2, wmax=16, feedback=fb, tcp="sack", switch_time="uniform"))
    out = []
    for spec in cases:
        tcp, fb, sw, inc, *clock = spec.split(":")
        extra = {"ack_clock": clock[0]} if clock and clock[0] != "at-epoch" else {}
        _skeleton._CACHE.clear()
        times, bits = [], []
        for psi in PSI:
            t0 = time.perf_counter()
            r = analyze(Scenario(delta=40, bmax=10, psi=psi, wmax=128, feedback=fb, tcp=tcp, switch_time=sw,
                                 ca_increment=inc, **extra))
            times.append(time.perf_counter() - t0)
            bits.append([float(r.prediction).hex(), float(r.conservative).hex(), float(r.optimistic).hex()])
        out.append({"case": spec, "states": r.n_states, "first": times[0], "per_point": times[1:], "bits": bits})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, action="append", default=[],
                    help="another checkout of the package, timed in the same run (repeatable)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--cases", nargs="+", default=CASES)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.cases)))
        return 0
    trees = named_trees(args.baseline, HERE)
    best: dict[tuple, dict] = {}
    for _ in range(args.repeat):
        for name, tree in trees:
            for row in run_child(__file__, tree, ["--cases", *args.cases]):
                key = (name, row["case"])
                if key in best:   # the best of the repeats, psi by psi
                    row["first"] = min(row["first"], best[key]["first"])
                    row["per_point"] = [min(a, b) for a, b in zip(row["per_point"], best[key]["per_point"])]
                best[key] = row
    print("Delta 40, B_max 10, W_max 128; psi " + ", ".join(f"{p:g}" for p in PSI) + f"; best of {args.repeat}; trees: "
          + ", ".join(f"{n} = {t}" for n, t in trees))
    print("| case (tcp:feedback:switch_time:ca_increment[:ack_clock]) | tree | states | first s | per point: median ms "
          "| largest ms |")
    print("|---|---|---|---|---|---|")
    for c in args.cases:
        for name, _ in trees:
            r = best[(name, c)]
            med = 1e3 * statistics.median(r["per_point"])
            print(f"| {c} | {name} | {r['states']:,} | {r['first']:.3f} | {med:.1f} | "
                  f"{1e3 * max(r['per_point']):.1f} |")
    for c in args.cases:
        ref = best[("this tree", c)]
        for name, _ in trees[:-1]:
            a = best[(name, c)]
            rel = max(abs(float.fromhex(x) - float.fromhex(y)) / abs(float.fromhex(y))
                      for ra, rb in zip(a["bits"], ref["bits"]) for x, y in zip(ra, rb))
            same = "bit for bit" if a["bits"] == ref["bits"] else f"largest relative difference {rel:.2g}"
            print(f"{c}: {name} -> this tree: the three bounds at the {len(PSI)} psi {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
