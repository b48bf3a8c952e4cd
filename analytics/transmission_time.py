"""The round trip's transmission time on measured links: how much of the engine's excess it is (issue 23).

The chain's epoch is the round-trip *propagation* delay (eq. 5, III-A.5): a packet that reaches
the bottleneck at ``T_k`` is served and its ACK is back at ``T_{k+1}``. In the simulator, as in the
system, a packet's round trip through an empty pipe is the propagation plus the wait for its
delivery opportunity. On the paper's link that is one packet time in ``Delta`` (docs/model.md sec.
3b: 2.5-5 %). On a cellular link at RTT 20 ms the level of an epoch serves a few packets, and the
gap between opportunities is a fifth of the round trip and more. Two measurements, per point of a
trace study (``analytics/traces.py``'s CSV):

1. **The engine against the link it models** (as ``analytics/engine_gap.py``: the fitted chain
   and its patterns drawn as a trace, ten halves long), simulated twice: with the study's RTT,
   and with the RTT less the mean transmission time ``tx``, INSTCAP's feedback still timed by the
   chain's epoch, the study's RTT (``tx`` = the mean over the serving
   levels, weighted by their occupancy, of ``min(1, 1 / (c_k rtt))`` round trips: one gap between
   opportunities at the level, ``trace_study.transmission_share``). If the chain's excess is the
   missing transmission, the second simulation, whose empty-pipe round trip is the chain's epoch,
   meets the prediction.
2. **The chain fitted at epoch ``rtt (1 + tx)``** (``fit_link(..., round_trip='transmission')``, ``tcpabr
   analyze --trace --round-trip transmission``: the same number of levels and patterns; its ``delta`` then
   includes the transmission), against the replays of the fitted half (in sample)
   and of the other half (out of sample), at the points of at most ``--state-limit`` states.

    python analytics/transmission_time.py --study STUDY.csv [--state-limit 400000] [--out DIR]

Findings: docs/traces.md sec. 7.2y.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from engine_gap import PATH_FACTOR, SHARED  # noqa: E402
from traces_fit import StudyLinks, md_table, point_label, read_study, study_parser, write_report  # noqa: E402

from tcpabr_model.capacity import synthetic_trace  # noqa: E402
from tcpabr_model.trace_study import _simulate, analyze_link  # noqa: E402


def run(study: pd.DataFrame, trace_dir: Path, state_limit: int, replications: int = 2, duration: float = 150.0,
        seed: int = 0, workers: int = 2, log=print) -> pd.DataFrame:
    fits, links, rows = StudyLinks(trace_dir), {}, []
    todo = study[study.prediction.notna() & study.feedback.isin(["none", "instcap"])]
    for _, p in todo.iterrows():
        name, rtt = p.trace_file, float(p.rtt)
        half = fits.half(name, p.fit_half)
        key = (name, p.fit_half, rtt)
        if key not in links:
            link = fits.link(name, p.fit_half, rtt, patterns=int(p.patterns))
            longer = fits.link(name, p.fit_half, rtt, patterns=int(p.patterns), round_trip="transmission")
            syn = synthetic_trace(link.model, PATH_FACTOR * int(half.period_ms / 1000.0 / rtt), seed,
                                  service=link.service)
            links[key] = (link, longer, syn)
        link, longer, syn = links[key]
        tx = longer.transmission
        t0 = time.perf_counter()
        scale = syn.mean_rate / link.mean_rate        # over the fitted half's mean capacity, as the prediction
        args = (int(p.bmax), int(p.wmax), p.feedback, replications, duration, seed, workers)
        sim = _simulate(syn, rtt, *args)[0] * scale
        # INSTCAP's feedback still timed by the chain's epoch, the study's RTT
        sim_short = _simulate(syn, rtt * (1.0 - tx), *args, timing_rtt=rtt)[0] * scale
        row = {"trace": name.split(".")[0], "rtt_ms": int(p.rtt_ms), "fit_half": p.fit_half, "buffer_bdp": p.buffer_bdp,
               "bmax": int(p.bmax), "feedback": p.feedback, "tx": tx, "prediction": p.prediction,
               "model_link": sim, "model_link_rtt_less_tx": sim_short,
               "replay_fitted_half": p.replay_fitted_half, "replay": p.replay, "prediction_epoch_tx": np.nan,
               "conservative_epoch_tx": np.nan, "optimistic_epoch_tx": np.nan}
        if p.analysis_states <= state_limit:
            a = analyze_link(longer, int(p.bmax), p.feedback, wmax=int(p.wmax), max_states=4 * state_limit)
            row.update(prediction_epoch_tx=a.prediction, conservative_epoch_tx=a.conservative,
                       optimistic_epoch_tx=a.optimistic)
        row["seconds"] = time.perf_counter() - t0
        rows.append(row)
        log(f"{point_label(p)} tx {tx:.3f}  "
            f"prediction {p.prediction:.3f}  modelled link {sim:.3f} (RTT less tx {sim_short:.3f})  "
            f"epoch rtt (1 + tx): {row['prediction_epoch_tx']:.3f}", flush=True)
    df = pd.DataFrame(rows)
    if len(df):
        df["engine_error"] = (df.prediction - df.model_link) / df.model_link
        df["engine_error_rtt_less_tx"] = (df.prediction - df.model_link_rtt_less_tx) / df.model_link_rtt_less_tx
    return df


def _med(x) -> str:
    x = x.dropna()
    return f"{100 * x.abs().median():.1f} % ({100 * x.median():+.1f} %)" if len(x) else "-"


def summary(df: pd.DataFrame) -> str:
    out = ["# The round trip's transmission time on measured links", "",
           "Median |error| (median signed). Part 1: the prediction against the link it models, simulated with the "
           "study's RTT and with the RTT less the mean transmission time `tx`.", ""]
    body = []
    for (fb, r), g in df.groupby(["feedback", "rtt_ms"]):
        body.append([fb, r, len(g), f"{g.tx.median():.3f}", _med(g.engine_error), _med(g.engine_error_rtt_less_tx)])
    out.append(md_table(["feedback", "RTT ms", "points", "tx (median)", "engine: study's RTT", "engine: RTT less tx"],
                        body))
    out += ["", "Part 2: the chain fitted at epoch `rtt (1 + tx)` (same K and patterns) against the replays, at the "
            "points analysed (in sample: the fitted half; out of sample: the other half); within 10 % in brackets.", ""]
    body = []
    d = df[df.prediction_epoch_tx.notna()]
    for (fb, r), g in list(d.groupby(["feedback", "rtt_ms"])) + [(("all", "all"), d)]:
        cells = [fb, r, len(g)]
        for col in ("prediction", "prediction_epoch_tx"):
            for ref in ("replay_fitted_half", "replay"):
                e = (g[col] - g[ref]) / g[ref]
                cells.append(f"{_med(e)} [{int((e.abs() <= 0.1).sum())}]")
        body.append(cells)
    out.append(md_table(["feedback", "RTT ms", "points", "epoch rtt: in sample", "out of sample",
                         "epoch rtt (1 + tx): in sample", "out of sample"], body))
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = study_parser(__doc__, "results/transmission_time", SHARED)
    ap.add_argument("--state-limit", type=int, default=400_000,
                    help="part 2 re-analyses the points of at most this many states (the study's count)")
    ap.add_argument("--replications", type=int, default=2)
    ap.add_argument("--duration", type=float, default=150.0, help="seconds per replication")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    study = read_study(a.study)
    if study is None:
        return 2
    t0 = time.perf_counter()
    df = run(study, a.traces_dir, a.state_limit, a.replications, a.duration, workers=a.workers)
    write_report(df, a.out, "transmission_time", summary(df), t0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
