"""Where the study's in-sample error lies: the analysis against the link it models (issue 23).

The study (``analytics/traces.py``) compares the Markov renewal prediction with the replay of
the trace the chain was fitted on ("in sample").  That error has two parts:

* **the capacity model**: how far the fitted chain with its within-epoch patterns is from the
  measured link, for TCP;
* **the engine**: how far the analysis is from the link it models.

This script separates them.  For every analysed point of a study CSV it draws a trace from the
fitted chain *and its patterns* (``capacity.synthetic_trace(model, n, seed, service=patterns)``:
each epoch holds the opportunities of one measured pattern of its level, the levels follow a
path of the chain) ten times as long as the fitted half (``PATH_FACTOR``; each replication
replays a stretch of the half's length from a random start), and replays it with the same
simulator settings as the study's replay.  Then, per point (efficiencies over the fitted half's mean capacity):

* ``model_link``: the simulation of the modelled link, with its 95 % CI;
* ``engine_error = (prediction - model_link) / model_link``;
* ``capacity_model_error = (model_link - replay_fitted_half) / replay_fitted_half``;
* the timeouts per second of both simulations by kind (simulator counters: repeated, a later
  hole of the same loss event, in slow start, the rest; and of the rest, those without a drop since
  the previous timeout, ``timeouts_without_drop``: the ACKs stopped for an RTO with nothing lost);
* ``model_duplicate_share`` (and the replay's): the share of the frames the receiver got that were not
  new data, go-back-N's duplicates after a timeout (docs/traces.md sec. 7.2z).

Nothing here is fitted or tuned: the chain, the patterns and the prediction are the study's.

Usage: ``python analytics/engine_gap.py --study out/traces/traces_study.csv --out DIR``
(``--quick``: the first four analysed points, 2 x 60 s).  ``--delay-states N`` also re-analyses
the points of at most ``N`` states and compares the analysis' mean queueing delay (TCP alone) and its
total delay (INSTCAP: the segmentation buffer and the bottleneck; docs/model.md sec. 13) with the
simulated modelled link's, per delivered packet, seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analytics"))

from tcpabr_model.capacity import read_trace, synthetic_trace  # noqa: E402
from traces_fit import point_label, write_report  # noqa: E402

from tcpabr_model.trace_study import (  # noqa: E402
    INSTCAP_TIMINGS,
    _simulation,
    fit_link,
    trace_halves,
)

KINDS = ("timeouts_repeated", "timeouts_later_hole", "timeouts_in_slow_start")
#: the drawn path is this many times as long as the fitted half **[choice]**: one path of the half's
#: length has a mean capacity up to 6 % off the chain's (levels held for several round trips), which
#: the comparison then charged to the engine; each replication replays a random stretch of it
PATH_FACTOR = 10
SHARED = ROOT.parent / "shared" / "traces"


def _sim(capacity, rtt, bmax, wmax, feedback, replications, duration, seed, workers, tcp, instcap_timing="round-trip"):
    r = _simulation(capacity, rtt, bmax, wmax, feedback, replications, duration, seed, workers, tcp, instcap_timing)
    secs = replications * (duration - min(10.0, duration / 10.0))
    c = r.counters
    rates = {k: c[k] / secs for k in ("timeouts", *KINDS)}
    rates["timeouts_fresh"] = rates["timeouts"] - sum(rates[k] for k in KINDS)
    rates["timeouts_without_drop"] = c["timeouts_without_drop"] / secs   # of the fresh: a silence, nothing lost
    # the receiver's frames that were not new data (go-back-N's duplicates), over all it received, since t = 0
    rates["duplicates"] = 1.0 - c["delivered_segments"] / max(c["frames_reassembled"], 1)
    hw = r.efficiency_wire.half_width
    d = r.delay
    nan = float("nan")

    def est(x):
        return float(x.mean), float(x.half_width) if x.half_width is not None else nan

    queue = est(d.queue.mean) if d is not None else (nan, nan)
    # source + bottleneck per delivered packet (the propagation taken out), as the validity map's total
    total = ((float(d.total.mean.mean) - float(d.propagation.mean.mean), est(d.total.mean)[1]) if d is not None
             else (nan, nan))
    return float(r.efficiency_wire.mean), float(hw) if hw is not None else nan, rates, queue, total


def silences(times_ms, rtt: float) -> tuple[float, float]:
    """Per second of a link (opportunity times, ms): ``(gaps, pairs)``.  ``gaps``: the gaps between
    consecutive opportunities of at least two round trips, the study TCP's fixed RTO: a sender with
    data in flight times out in each (its ACKs stop for that long), lost packet or not.  ``pairs``: the
    epochs of one round trip (from the first opportunity, ``t0 + (k, k + 1]``) that follow another
    epoch with no opportunity and have none themselves: the chain's rule for such a timeout (docs/model.md
    sec. 11: two intervals without an ACK), read on the same link, one per run of empty epochs.  A gap of
    two to three round trips spans two empty epochs only where it is aligned with them; the rest are
    timeouts the chain does not have (docs/traces.md sec. 7.2z)."""
    t = np.unique(np.asarray(times_ms, dtype=np.int64))
    if t.shape[0] < 2:
        return float("nan"), float("nan")
    span = (t[-1] - t[0]) / 1000.0
    ep = max(1, int(round(rtt * 1000.0)))
    gaps = float(np.count_nonzero(np.diff(t) >= 2 * ep)) / span
    # epoch k holds (t0 + k ep, t0 + (k + 1) ep]; the first opportunity opens epoch 0
    n = max(1, -(-int(t[-1] - t[0]) // ep))
    busy = np.zeros(n, dtype=bool)
    busy[np.minimum((t[1:] - t[0] - 1) // ep, n - 1)] = True
    busy[0] = True
    two = ~busy[1:] & ~busy[:-1]          # epoch k + 1 empty after an empty epoch k
    starts = two & np.concatenate(([True], ~two[:-1]))   # one per run of empty epochs, as one gap
    return gaps, float(np.count_nonzero(starts)) / span


def _reanalysis(link, p) -> tuple[float, float, float]:
    """The analysis' mean queueing delay and its total delay (the source's segmentation buffer and the
    bottleneck; seconds; docs/model.md sec. 13) at the study point ``p``, with the study's loss cycle
    and, over INSTCAP, its window search: time units of the peak level's packet time.  Third: its loss
    events per second (the loss probability per embedded step over the mean step, ``mean_cycle_length``
    epochs of one RTT): a timeout-only TCP's timeouts, one per loss event."""
    from tcpabr_model.markov import analyze
    from tcpabr_model.trace_study import LINK_WINDOW_TAIL, link_scenario

    lc = p.loss_cycle if isinstance(p.loss_cycle, str) else None
    sc = link_scenario(link, int(p.bmax), p.feedback, wmax=int(p.wmax), loss_cycle=lc,
                       max_states=int(p.analysis_states) + 1)
    r = analyze(sc, window_tail=LINK_WINDOW_TAIL if p.feedback != "none" else None)
    unit = float(np.max(link.model.levels))
    return (float(r.mean_queueing_delay) / unit, (float(r.mean_queueing_delay) + float(r.mean_source_delay)) / unit,
            float(r.loss_probability) / (float(r.mean_cycle_length) * float(p.rtt)))


def run(study: pd.DataFrame, trace_dir: Path, replications: int, duration: float | None, seed: int, workers: int,
        log=print, delay_states: int = 0, instcap_timing: str = "round-trip") -> pd.DataFrame:
    rows = []
    halves, links = {}, {}
    todo = study[study.prediction.notna() & study.feedback.isin(["none", "instcap"])]
    for _, p in todo.iterrows():
        name = p.trace_file
        if name not in halves:
            a, b = trace_halves(read_trace(trace_dir / name))
            halves[name] = {"A": a, "B": b}
        half = halves[name][p.fit_half]
        # the link the study analysed: its within-epoch patterns per level (a study before the
        # column had fit_link's default); until 2026-11-27 this drew 8 whatever the study used
        npat = int(p.patterns) if "patterns" in p.index and pd.notna(p.patterns) else 8
        # the study's chain: second order where the study ran with --order 2 (a study without the column: 1)
        order = int(p.order) if "order" in p.index and pd.notna(p.order) else 1
        key = (name, p.fit_half, float(p.rtt), npat, order)
        if key not in links:
            links[key] = fit_link(half, float(p.rtt), patterns=npat, order=order)
        link = links[key]
        n_epochs = PATH_FACTOR * int(half.period_ms / 1000.0 / float(p.rtt))
        syn = synthetic_trace(link.model, n_epochs, seed, service=link.service)
        d = duration if duration is not None else min(300.0, half.period_ms / 1000.0)
        tcp = p.tcp if isinstance(p.tcp, str) else "timeout-only"
        t0 = time.perf_counter()
        m, h, km, (kq, kq_hw), (kt, kt_hw) = _sim(syn, float(p.rtt), int(p.bmax), int(p.wmax), p.feedback,
                                                   replications, d, seed, workers, tcp, instcap_timing)
        scale = syn.mean_rate / link.mean_rate        # over the fitted half's mean capacity, as the prediction
        r, rh, kr, _, _ = _sim(half, float(p.rtt), int(p.bmax), int(p.wmax), p.feedback, replications, d, seed,
                               workers, tcp, instcap_timing)
        ad = (_reanalysis(link, p) if 0 < p.analysis_states <= delay_states else (float("nan"),) * 3)
        row = {"trace": name.split(".")[0], "rtt_ms": int(p.rtt_ms), "fit_half": p.fit_half, "patterns": npat,
               "order": order,
               "buffer_bdp": p.buffer_bdp, "bmax": int(p.bmax), "wmax": int(p.wmax), "feedback": p.feedback, "tcp": tcp,
               "prediction": p.prediction, "conservative": p.conservative, "optimistic": p.optimistic,
               "model_link": m * scale, "model_link_hw": h * scale, "replay_fitted_half": r,
               "replay_fitted_half_hw": rh, "study_replay_fitted_half": p.replay_fitted_half,
               "model_link_mean_pps": syn.mean_rate, "fit_mean_pps": link.mean_rate,
               **dict(zip(("trace_silences_per_s", "trace_empty_pairs_per_s"), silences(half.times_ms, p.rtt))),
               **dict(zip(("model_link_silences_per_s", "model_link_empty_pairs_per_s"),
                          silences(syn.times_ms, p.rtt))),
               "model_duplicate_share": km.pop("duplicates"), "replay_duplicate_share": kr.pop("duplicates"),
               **{f"model_{k}_per_s": v for k, v in km.items()}, **{f"replay_{k}_per_s": v for k, v in kr.items()},
               "model_link_queue_delay_s": kq, "model_link_queue_delay_hw_s": kq_hw,
               "model_link_total_delay_s": kt, "model_link_total_delay_hw_s": kt_hw,
               "analysis_queue_delay_s": ad[0] if p.feedback == "none" else float("nan"),
               "analysis_total_delay_s": ad[1], "analysis_loss_events_per_s": ad[2],
               "sim_seconds": time.perf_counter() - t0}
        rows.append(row)
        log(f"{point_label(p)} "
            f"prediction {p.prediction:.3f} [{p.conservative:.3f}, {p.optimistic:.3f}]  modelled link "
            f"{row['model_link']:.3f} +/- {row['model_link_hw']:.3f}  replay {r:.3f}  "
            f"timeouts/s model {km['timeouts']:.2f} replay {kr['timeouts']:.2f}  ({row['sim_seconds']:.0f} s)", flush=True)
    df = pd.DataFrame(rows)
    if len(df):
        df["engine_error"] = (df.prediction - df.model_link) / df.model_link
        df["capacity_model_error"] = (df.model_link - df.replay_fitted_half) / df.replay_fitted_half
        df["in_sample_error"] = (df.prediction - df.replay_fitted_half) / df.replay_fitted_half
        df["band_holds_model_link"] = ((df.conservative <= df.model_link + df.model_link_hw)
                                       & (df.optimistic >= df.model_link - df.model_link_hw))
        df["queue_delay_ratio"] = df.analysis_queue_delay_s / df.model_link_queue_delay_s
        df["total_delay_ratio"] = df.analysis_total_delay_s / df.model_link_total_delay_s
    return df


def summary(df: pd.DataFrame) -> str:
    def med(x):
        return f"{100 * np.median(np.abs(x)):.1f} %" if len(x) else "-"

    def signed(x):
        return f"{100 * np.median(x):+.1f} %" if len(x) else "-"

    out = ["| points | n | in sample: median \\|error\\| | capacity model: median \\|error\\| (signed) | "
           "engine: median \\|error\\| (signed) | engine within 10 % | band holds on the modelled link |",
           "|---|---|---|---|---|---|---|"]
    groups = [("all", df)]
    for fb in ("none", "instcap"):
        for bdp in sorted(df.buffer_bdp.unique()):
            groups.append((f"{'TCP alone' if fb == 'none' else 'INSTCAP'}, {bdp:g} BDP",
                           df[(df.feedback == fb) & (df.buffer_bdp == bdp)]))
    for rtt in sorted(df.rtt_ms.unique()):
        groups.append((f"RTT {rtt} ms", df[df.rtt_ms == rtt]))
    for name, g in groups:
        if not len(g):
            continue
        out.append(f"| {name} | {len(g)} | {med(g.in_sample_error)} | {med(g.capacity_model_error)} "
                   f"({signed(g.capacity_model_error)}) | {med(g.engine_error)} ({signed(g.engine_error)}) | "
                   f"{int((g.engine_error.abs() <= 0.10).sum())} | {int(g.band_holds_model_link.sum())} |")
    k = ["timeouts_repeated", "timeouts_later_hole", "timeouts_in_slow_start", "timeouts_fresh"]
    tot = df[[f"model_{x}_per_s" for x in k]].sum()
    share = tot / tot.sum() if tot.sum() > 0 else tot
    out.append("")
    out.append("Timeouts of the modelled link's simulation, by kind (share of all, all points): "
               + ", ".join(f"{x.replace('timeouts_', '')} {100 * s:.0f} %" for x, s in zip(k, share)))
    d = df[df.analysis_loss_events_per_s.notna()] if "analysis_loss_events_per_s" in df else df.iloc[:0]
    if len(d):   # the chain's losses against the simulated kinds of timeout (docs/traces.md sec. 7.2x)
        fresh = d.analysis_loss_events_per_s / d.model_timeouts_fresh_per_s
        every = d.analysis_loss_events_per_s / d.model_timeouts_per_s
        out.append("")
        out.append(f"The analysis' loss events per second at {len(d)} re-analysed points, over the modelled link's "
                   f"fresh timeouts: median {fresh.median():.2f} (range {fresh.min():.2f}-{fresh.max():.2f}); over "
                   f"all its timeouts: median {every.median():.2f} (the chain has no repeated, later-hole or "
                   "slow-start timeout)")
    if "model_duplicate_share" in df:
        out.append("")
        out.append("Duplicates (go-back-N's, after a timeout) among the frames the receiver got, on the modelled "
                   f"link: median {100 * df.model_duplicate_share.median():.1f} % (the replay "
                   f"{100 * df.replay_duplicate_share.median():.1f} %); correlation with the engine error "
                   f"{df.model_duplicate_share.corr(df.engine_error):.2f}")
    if "trace_silences_per_s" in df:
        u = df.drop_duplicates(["trace", "fit_half", "rtt_ms"])
        out.append("")
        out.append("Silences of at least two round trips (the fixed RTO) per second, median over the "
                   f"{len(u)} fitted (trace, half, RTT): the fitted half {u.trace_silences_per_s.median():.2f}, "
                   f"the modelled link {u.model_link_silences_per_s.median():.2f}; runs of two or more empty "
                   f"epochs (the chain's rule) on the fitted half {u.trace_empty_pairs_per_s.median():.2f}, on the "
                   f"modelled link {u.model_link_empty_pairs_per_s.median():.2f}")
    for what, kind, fb in (("TCP alone's mean queueing delay", "queue", "none"),
                           ("INSTCAP's mean total delay (segmentation buffer + bottleneck)", "total", "instcap")):
        col = f"{kind}_delay_ratio"
        d = df[(df.feedback == fb) & df[col].notna()] if col in df else df.iloc[:0]
        if not len(d):
            continue
        ana, sim = d[f"analysis_{kind}_delay_s"], d[f"model_link_{kind}_delay_s"]
        hw = d[f"model_link_{kind}_delay_hw_s"]
        ok = (ana - sim).abs() <= hw + 0.05 * sim
        out.append("")
        out.append(f"{what} (docs/model.md sec. 13), analysis / simulation of the modelled link, at {len(d)} points: "
                   f"median {d[col].median():.2f}, range {d[col].min():.2f}-{d[col].max():.2f}; within CI + 5 % at "
                   f"{int(ok.sum())}")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", required=True, help="a traces_study.csv of analytics/traces.py")
    ap.add_argument("--traces-dir", default=str(SHARED))
    ap.add_argument("--replications", type=int, default=5)
    ap.add_argument("--duration", type=float, default=None, help="seconds per replication (default: the study's, "
                    "min(300, the half's period))")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="the first four analysed points, 2 x 60 s")
    ap.add_argument("--delay-states", type=int, default=0,
                    help="re-analyse the points of at most this many states (the study's count) and compare the "
                         "analysis' mean delays with the modelled link's (default 0: none)")
    ap.add_argument("--instcap-timing", choices=INSTCAP_TIMINGS, default="round-trip",
                    help="how both simulations time INSTCAP (trace_study.feedback_timing; default 'round-trip', the "
                         "analysis' INSTCAP; 'testbed': the simulator's s = 30 ms, applied one round trip later)")
    ap.add_argument("--out", default=str(ROOT / "out" / "engine_gap"))
    a = ap.parse_args(argv)
    study = pd.read_csv(a.study)
    reps, dur = a.replications, a.duration
    if a.quick:
        study = study[study.prediction.notna()].head(4)
        reps, dur = 2, 60.0
    t0 = time.perf_counter()
    df = run(study, Path(a.traces_dir), reps, dur, a.seed, a.workers, delay_states=a.delay_states,
             instcap_timing=a.instcap_timing)
    text = (f"# The analysis against the link it models\n\n`python analytics/engine_gap.py --study {a.study}` "
            f"({len(df)} points, {time.perf_counter() - t0:.0f} s)\n\n" + summary(df))
    write_report(df, Path(a.out), "engine_gap", text, t0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
