"""Issue 26's targets for the feedback designer (item 3), measured.

**Traces, held out.**  On each trace (the shipped ``tests/data/*.down`` and, when present,
``../shared/traces/*.down``) at RTT 50 ms and buffers of 0.5 and 2 BDP (``bmax = round(b x
mean rate x RTT)`` packets, the trace study's rule), :func:`tcpabr_model.design.design_held_out`
designs on each half and replays the other half: the designed EFFCAP (the best EFFCAP whose
p95 on the design half is within INSTCAP's p95 there) against INSTCAP on the held-out half.
Target: within 5 % of INSTCAP's throughput at no more p95 delay.

**The paper's link.**  Delta 40, B_max 10, psi 1, 10, 100, 1000: the designer's M and N (the
best EFFCAP within INSTCAP's p95, and the best EFFCAP without a limit) against the paper's rule
(M : Delta, N : 8 Delta, ``closed_forms.effcap_design``), and the max-min design over the four psi.

    python analytics/design_targets.py [--traces PATH ...] [--intervals S ...] [--workers 2] [--replications 3]
        [--out DIR]

``--intervals``: EFFCAP's (and INSTCAP's) measurement intervals s to search on the traces, seconds (issue
26 item 3: M, N and s); default the base scenario's s (30 ms) only.  ``base`` stands for that s.

DIR defaults to out/design_targets.

Writes ``design_traces.csv``, ``design_paper.csv`` and a markdown summary on stdout.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tcpabr_model.capacity import read_trace  # noqa: E402
from tcpabr_model.design import Candidate, candidate_grid, design  # noqa: E402
from tcpabr_model.design.robust import best_within, design_held_out, design_over_psi  # noqa: E402
from tcpabr_model.sim import Scenario, TcpConfig  # noqa: E402
from tcpabr_model.sim.cli import _trace_window  # noqa: E402

SHARED = ROOT.parent / "shared" / "traces"
#: the search of the targets (wider than the CLI's default grid: N = 1 and 2, M = 2)
GRID = {"m": (1, 2, 4), "n": (1, 2, 4, 16), "utilisation": (0.9, 0.95)}


def traces_default() -> list:
    out = sorted((ROOT / "tests" / "data").glob("*.down"))
    if SHARED.is_dir():
        out += sorted(SHARED.glob("*.down"))
    return out


def run_traces(paths, rtt, buffers, reps, workers, log=print, intervals=(None,)) -> pd.DataFrame:
    cands = candidate_grid(**GRID, interval=tuple(intervals))
    rows = []
    for path in paths:
        tr = read_trace(str(path))
        for bf in buffers:
            bmax = max(1, int(round(bf * tr.mean_rate * rtt)))
            base = Scenario(feedback="instcap", rtt=rtt, buffer_packets=bmax, payload_bytes=1460, capacity=tr,
                            duration=tr.period_ms / 1000.0, tcp=TcpConfig(wmax=_trace_window(tr, rtt, bmax)))
            t0 = time.perf_counter()
            h = design_held_out(base, cands, replications=reps, seed=0, workers=workers)
            sec = time.perf_counter() - t0
            for k, r in enumerate(h.rounds):
                inst, tcp = r.on_test(Candidate("instcap")), r.on_test(Candidate("none"))
                e = r.on_test(r.chosen_effcap)
                t = r.effcap_vs_instcap()
                di = next(p for p in r.designed.points if p.candidate == Candidate("instcap"))
                row = {"trace": Path(path).name, "buffer_bdp": bf, "bmax": bmax, "round": "AB"[k] + "->" + "BA"[k],
                       "limit_ms": None if r.limit is None else 1e3 * r.limit,
                       "chosen": None if r.chosen is None else r.chosen.label,
                       "effcap": None if r.chosen_effcap is None else r.chosen_effcap.label,
                       "design_instcap_th": di.throughput.mean,
                       "instcap_th": inst.throughput.mean, "instcap_p95_ms": 1e3 * inst.p95_delay.mean,
                       "tcp_th": tcp.throughput.mean, "tcp_p95_ms": 1e3 * tcp.p95_delay.mean,
                       "effcap_th": None if e is None else e.throughput.mean,
                       "effcap_p95_ms": None if e is None else 1e3 * e.p95_delay.mean,
                       "rel": None if t is None else t["throughput_rel"],
                       "met": None if t is None else t["met"], "seconds_both_rounds": sec}
                # the best EFFCAP on the design half without the delay limit, and its p95 there
                bu = best_within(r.designed.points, None, "effcap")
                row["effcap_unlimited_design"] = f"{bu.candidate.label} {bu.throughput.mean:.3f} / " \
                                                 f"{1e3 * bu.p95_delay.mean:.0f} ms"
                rows.append(row)
                log(f"{row['trace']:28s} {bf:g} BDP ({bmax:3d}) {row['round']}: INSTCAP {row['instcap_th']:.3f}/"
                    f"{row['instcap_p95_ms']:.0f} ms, {row['effcap']}: {row['effcap_th']}/{row['effcap_p95_ms']} "
                    f"met={row['met']} ({sec:.0f} s)", flush=True)
    return pd.DataFrame(rows)


def run_paper(psis, reps, workers, log=print) -> tuple:
    from tcpabr_model.closed_forms import effcap_design

    cands = candidate_grid(m=(1, 2, 4, 7), n=(2, 4, 8, 16, 49), utilisation=(0.9, 0.95))
    bases = [Scenario.from_normalized(delta=40, bmax=10, psi=x) for x in psis]
    rows, designs = [], []
    for x, b in zip(psis, bases):
        t0 = time.perf_counter()
        d = design(b, cands, replications=reps, seed=0, workers=workers)
        sec = time.perf_counter() - t0
        designs.append(d)
        pts = {p.candidate: p for p in d.points}
        inst, rule = pts[Candidate("instcap")], pts[Candidate("effcap")]
        lim = inst.p95_delay.mean
        e_lim, e_all = best_within(d.points, lim, "effcap"), best_within(d.points, None, "effcap")
        rule_sc = Candidate("effcap").scenario(b)
        rows.append({"psi": x, "rule_M": rule_sc.m[0], "rule_N": rule_sc.n[0],
                     "rule_th": rule.throughput.mean, "rule_p95_ms": 1e3 * rule.p95_delay.mean,
                     "instcap_th": inst.throughput.mean, "instcap_p95_ms": 1e3 * lim,
                     "tcp_th": pts[Candidate("none")].throughput.mean,
                     "tcp_p95_ms": 1e3 * pts[Candidate("none")].p95_delay.mean,
                     "designed_within_instcap_p95": None if e_lim is None else e_lim.candidate.label,
                     "designed_th": None if e_lim is None else e_lim.throughput.mean,
                     "designed_p95_ms": None if e_lim is None else 1e3 * e_lim.p95_delay.mean,
                     "best_effcap_no_limit": e_all.candidate.label, "best_effcap_th": e_all.throughput.mean,
                     "best_effcap_p95_ms": 1e3 * e_all.p95_delay.mean, "seconds": sec,
                     "closed_form_rule": str(effcap_design(0.2, 0.03))})
        log(f"psi {x:g}: {rows[-1]}", flush=True)
    lim = max(1e-3 * r["instcap_p95_ms"] for r in rows)
    rob = design_over_psi(bases, psis, cands, replications=reps, seed=0, workers=workers, max_p95_delay=lim,
                          analysis=False)
    return pd.DataFrame(rows), rob


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", nargs="*", default=None)
    ap.add_argument("--rtt", type=float, default=0.05)
    ap.add_argument("--buffers", type=float, nargs="+", default=[0.5, 2.0])
    ap.add_argument("--psi", type=float, nargs="+", default=[1, 10, 100, 1000])
    ap.add_argument("--intervals", nargs="+", default=None, metavar="S",
                    help="measurement intervals s to search on the traces, seconds, or 'base' (default: base only)")
    ap.add_argument("--replications", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-paper", action="store_true")
    ap.add_argument("--skip-traces", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "out" / "design_targets"))
    a = ap.parse_args(argv)
    try:
        intervals = tuple(None if v == "base" else float(v) for v in (a.intervals or ["base"]))
        candidate_grid(**GRID, interval=intervals)
    except ValueError as e:
        ap.exit(2, f"design_targets.py: error: --intervals {' '.join(a.intervals)}: {e}\n")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if not a.skip_traces:
        df = run_traces(a.traces or traces_default(), a.rtt, a.buffers, a.replications, a.workers,
                        intervals=intervals)
        df.to_csv(out / "design_traces.csv", index=False)
        print(df.to_string(index=False))
    if not a.skip_paper:
        dp, rob = run_paper(a.psi, a.replications, a.workers)
        dp.to_csv(out / "design_paper.csv", index=False)
        print(dp.to_string(index=False))
        print("\n".join(rob.lines()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
