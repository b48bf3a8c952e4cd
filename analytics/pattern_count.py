"""How much the analysis of a measured link moves with the within-epoch patterns per level
(docs/traces.md sec. 7.2q).

The analysis of a trace (``trace_study.fit_link``, docs/model.md sec. 11) represents the service
inside an interval at level ``k`` by ``P`` of the level's measured epochs (at the quantiles of
their count, equal weights).  Those representatives are a *sample*: this script analyses the
trace study's points (``analytics/traces.py``: each half of each trace fitted at epoch = RTT,
buffers in bandwidth-delay products of the other half, the study's window, timer cycle and ACK
counter) with several ``P`` for the same chain and reports how far each prediction moves from
one ``P`` to the next, and against the largest ``P`` given (the reference; with few patterns a
small buffer's prediction is biased high, docs/traces.md sec. 7.2q).  No replay is run or read:
the shifts are the discretisation's own.

Usage::

    python analytics/pattern_count.py [--patterns 2,4,8] [--feedbacks none,instcap]
        [--traces FILE ...] [--rtts 0.02,0.05,0.1] [--buffers 0.5,2] [--max-wmax W]
        [--timeout S] [--jobs 2] [--out DIR] [--quick]

``--max-wmax`` skips points whose window is above ``W`` (their chains are the large ones);
``--quick``: the shipped 3-level test trace at RTT 100 ms, 0.5 BDP, ``P`` 1 and 2.  Writes
``pattern_count.csv`` (one row per point and ``P``) and ``pattern_count.md`` (the shifts).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analytics"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import traces as study  # noqa: E402
from traces_fit import md_table  # noqa: E402
from tcpabr_model.runtime.atomic import write_table, write_text  # noqa: E402

KEY = ["trace_file", "rtt_ms", "fit_half", "buffer_bdp", "feedback"]


def jobs(traces, rtts, buffers, feedbacks, patterns, max_wmax=None, state_limit=study.STATE_LIMIT_INSTCAP):
    """``(key, arguments of traces.analysis_result)`` for every study point and ``P``; the key is
    ``(trace file, rtt ms, fitted half, buffer in BDP, feedback, P, bmax, wmax)``."""
    out = []
    for path in traces:
        halves = dict(zip("AB", study.trace_halves(study.read_trace(path))))
        for rtt in rtts:
            for fit_h, rep_h in (("A", "B"), ("B", "A")):
                link = study.fit_link(halves[fit_h], rtt, patterns=max(patterns))
                peak = float(np.max(link.model.levels))
                links = {p: link if p == max(patterns) else study.with_patterns(link, halves[fit_h], p)
                         for p in patterns}
                for bf in buffers:
                    bmax = max(1, int(round(bf * halves[rep_h].mean_rate * rtt)))
                    wmax = study.window_packets(peak, rtt, bmax)
                    if max_wmax is not None and wmax > max_wmax:
                        continue
                    for fb in feedbacks:
                        for p in patterns:
                            key = (Path(path).name, round(rtt * 1000), fit_h, bf, fb, p, bmax, wmax)
                            out.append((key, (links[p], bmax, fb, wmax, state_limit, state_limit, "timeout-only",
                                              study.link_loss_cycle(None, "timeout-only"), study.LINK_CA_INCREMENT)))
    return sorted(out, key=lambda j: (j[0][5], j[0][7]))     # small P and windows first


def table(results: dict) -> pd.DataFrame:
    rows = []
    for key, r in results.items():
        rows.append(dict(zip(KEY + ["patterns", "bmax", "wmax"], key), prediction=r.get("prediction", np.nan),
                         conservative=r.get("conservative", np.nan), optimistic=r.get("optimistic", np.nan),
                         states=r.get("n_states"), seconds=r.get("seconds"), peak_gb=r.get("peak_gb"),
                         refused=r.get("refused", "")))
    return pd.DataFrame(rows).sort_values(KEY + ["patterns"]).reset_index(drop=True)


def shifts(df: pd.DataFrame) -> pd.DataFrame:
    """Per feedback and pair of consecutive ``P`` (then each smaller ``P`` against the largest, the
    reference): points analysed at both, median and largest ``|pred(P2) / pred(P1) - 1|`` (%), the
    median of ``pred(P1) / pred(P2) - 1`` (%, signed: how far the smaller count is above), and the
    median ratio of seconds and of states."""
    rows = []
    ps = sorted(df.patterns.unique())
    pairs = list(zip(ps, ps[1:])) + [(p, ps[-1]) for p in ps[:-2]]
    for fb, g in df.groupby("feedback", sort=False):
        w = g.pivot_table(index=KEY[:-1], columns="patterns", values=["prediction", "seconds", "states"])
        for p1, p2 in pairs:
            try:
                a, b = w["prediction"][p1], w["prediction"][p2]
            except KeyError:
                continue
            ok = a.notna() & b.notna()
            if not ok.any():
                continue
            d = (b[ok] / a[ok] - 1.0).abs() * 100.0
            rows.append({"feedback": fb, "P": f"{p1} -> {p2}", "points": int(ok.sum()),
                         "median abs shift %": round(float(d.median()), 2), "max abs shift %": round(float(d.max()), 2),
                         "within 2 %": int((d <= 2.0).sum()),
                         "signed median %": round(float((a[ok] / b[ok] - 1.0).median() * 100.0), 2),
                         "seconds ratio (median)": round(float((w["seconds"][p2][ok] / w["seconds"][p1][ok]).median()), 2),
                         "states ratio (median)": round(float((w["states"][p2][ok] / w["states"][p1][ok]).median()), 2)})
    return pd.DataFrame(rows)


def markdown(df: pd.DataFrame) -> str:
    """``df`` as a markdown table (``traces_fit.md_table``; no tabulate dependency)."""
    return md_table(list(df.columns), df.itertuples(index=False))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--patterns", default="2,4,8", help="patterns per level to compare, comma-separated")
    ap.add_argument("--feedbacks", default="none,instcap")
    ap.add_argument("--traces", nargs="+", help="Mahimahi trace files (default: the shared traces)")
    ap.add_argument("--rtts", default="0.02,0.05,0.1")
    ap.add_argument("--buffers", default="0.5,2")
    ap.add_argument("--max-wmax", type=int, default=None, help="skip points whose window is above this")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per analysis")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="the shipped test trace, RTT 100 ms, 0.5 BDP, P 1 and 2")
    ap.add_argument("--out", default=str(ROOT / "out" / "pattern_count"))
    a = ap.parse_args(argv)
    pats = sorted({int(x) for x in a.patterns.split(",")})
    if min(pats) < 1 or len(pats) < 2:
        raise SystemExit("--patterns needs at least two counts >= 1")
    rtts = [float(x) for x in a.rtts.split(",")]
    buffers = [float(x) for x in a.buffers.split(",")]
    fbs = a.feedbacks.split(",")
    if a.traces:
        traces = a.traces
    elif a.quick or not study.SHARED.is_dir():
        traces = [str(ROOT / "tests" / "data" / "markov3_outage.down")]
    else:
        traces = [str(study.SHARED / f) for f in study.SHARED_TRACES]
    if a.quick:
        rtts, buffers, pats = [0.1], [0.5], [1, 2]
    t0 = time.perf_counter()
    todo = jobs(traces, rtts, buffers, fbs, pats, a.max_wmax)
    study.warm_up(*{args[2:3] + args[4:] for _, args in todo})     # as the children will analyse
    df = table(study.run_analyses(todo, a.jobs, a.timeout))
    sh = shifts(df)
    os.makedirs(a.out, exist_ok=True)
    write_table(df, os.path.join(a.out, "pattern_count.csv"))
    md = ("Shift of the prediction from one count of within-epoch patterns per level to the next "
          f"(the same chain; {len(df)} analyses, {time.perf_counter() - t0:.0f} s):\n\n" + markdown(sh))
    write_text(Path(a.out, "pattern_count.md"), md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
