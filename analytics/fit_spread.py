"""How far the prediction moves when the fit sees a little less of the same trace (issue 23, diagnostic).

The analysis of a trace fits a K-level chain at epoch = the round trip (``trace_study.fit_link``): K by the
effective-capacity criterion, the levels by the epochs' counts, and the within-epoch patterns at the counts'
quantiles.  A fit on most of the same half describes it as well, but its levels, transitions and patterns are
other numbers, and its K may differ.  This script measures, per point of a trace study
(``analytics/traces.py``'s CSV) of at most ``--state-limit`` states, the prediction of the chains fitted on the
fitted half less each of its ``--jackknife`` J consecutive blocks in turn (the remaining blocks joined, one seam
each; the study's RTT, buffer, window, patterns per level and loss cycle; K chosen afresh, as a user refitting
would get), and reports

* ``spread``: (largest - smallest of the J) / the study's prediction (the whole half);
* ``se``: the jackknife standard error of the prediction, ``sqrt((J - 1) / J sum (x_j - mean)^2)``, over
  the study's prediction;
* whether the replay of the fitted half (in sample) and of the other half (out of sample), with their 95 %
  CIs, meet the study's prediction +/- 2 ``se``;
* with ``--replay-parts N``: at the N points of largest spread, the replay of each part itself (4 x 60 s): whether
  the parts are different links for TCP (the replays move with the predictions) or the fit amplifies small
  differences (the predictions move more);
* with ``--simulate N``: at the N points of largest spread, the simulator on a path of the chain fitted at the
  lowest and the highest prediction (``capacity.synthetic_trace``, 4 x 300 s): whether the
  link the chain models moves as the prediction does (the fit's sampling) or not (the engine).

Nothing is fitted to the replays.

    python analytics/fit_spread.py --study STUDY.csv [--jackknife 5] [--replay-parts 8]
        [--state-limit 150000] [--simulate 6] [--out DIR]

Findings: docs/traces.md sec. 7.2zd.
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
from traces_fit import StudyLinks, md_table, point_label, study_groups, study_main, study_parser  # noqa: E402

from tcpabr_model.stats import jackknife_se  # noqa: E402


def _meets(m, hw, lo, hi) -> bool:
    return bool(lo <= m + hw and hi >= m - hw)


def run(study: pd.DataFrame, trace_dir: Path, state_limit: int, blocks: int, simulate: int, replay_parts: int = 0,
        log=print) -> pd.DataFrame:
    from tcpabr_model.capacity import synthetic_trace, trace_less_block
    from tcpabr_model.errors import ChainTooLargeError
    from tcpabr_model.trace_study import _simulate, analyze_link, fit_link

    links = StudyLinks(trace_dir)
    fits: dict = {}
    rows, kept = [], {}
    todo = study[study.prediction.notna() & study.feedback.isin(["none", "instcap"])
                 & (study.analysis_states <= state_limit)]
    for _, p in todo.iterrows():
        t0 = time.perf_counter()
        half = links.half(p.trace_file, p.fit_half)
        lc = p.loss_cycle if isinstance(p.loss_cycle, str) else None
        preds, ks, cons, opts = [], [], [], []
        for j in range(blocks):
            key = (p.trace_file, p.fit_half, float(p.rtt), int(p.patterns), j)
            if key not in fits:
                fits[key] = fit_link(trace_less_block(half, j, blocks), float(p.rtt), patterns=int(p.patterns))
            link = fits[key]
            try:
                a = analyze_link(link, int(p.bmax), p.feedback, wmax=int(p.wmax), loss_cycle=lc,
                                 max_states=10 * state_limit)
                preds.append(a.prediction)
                cons.append(a.conservative)
                opts.append(a.optimistic)
            except ChainTooLargeError:    # a fit of more levels can make a larger chain: the point is left out
                preds.append(np.nan)
            ks.append(int(link.fit.states))
        x = np.array(preds)
        if np.isnan(x).any():
            log(f"{point_label(p)} left out: a fit less one block makes a chain above {10 * state_limit:,} states")
            continue
        full = float(p.prediction)
        se = jackknife_se(x)
        row = {"trace": p.trace_file.split(".")[0], "rtt_ms": int(p.rtt_ms), "fit_half": p.fit_half,
               "buffer_bdp": p.buffer_bdp, "bmax": int(p.bmax), "wmax": int(p.wmax), "feedback": p.feedback,
               "prediction": full, **{f"prediction_less_{j}": preds[j] for j in range(blocks)},
               **{f"conservative_less_{j}": cons[j] for j in range(blocks)},
               **{f"optimistic_less_{j}": opts[j] for j in range(blocks)},
               "conservative": float(p.conservative), "optimistic": float(p.optimistic),
               "conservative_se": jackknife_se(cons), "optimistic_se": jackknife_se(opts),
               **{f"k_less_{j}": ks[j] for j in range(blocks)}, "k": int(p.states),
               "lowest": float(x.min()), "highest": float(x.max()), "spread": float(x.max() - x.min()) / full,
               "se": se / full, "replay_fitted_half": p.replay_fitted_half,
               "replay_fitted_half_hw": p.replay_fitted_half_hw, "replay": p.replay,
               "replay_half_width": p.replay_half_width,
               "in_sample_met": _meets(p.replay_fitted_half, p.replay_fitted_half_hw, full - 2 * se, full + 2 * se),
               "out_of_sample_met": _meets(p.replay, p.replay_half_width, full - 2 * se, full + 2 * se),
               "in_sample_error": (full - p.replay_fitted_half) / p.replay_fitted_half,
               "out_of_sample_error": (full - p.replay) / p.replay, "seconds": time.perf_counter() - t0}
        kept[len(rows)] = (p, int(np.argmin(x)), int(np.argmax(x)))
        log(f"{point_label(p)} {full:.3f} | " + " ".join(f"{v:.3f}(K{k})" for v, k in zip(preds, ks))
            + f"  spread {100 * row['spread']:.1f} %  se {100 * row['se']:.1f} %  fitted-half replay "
            f"{p.replay_fitted_half:.3f}", flush=True)
        rows.append(row)
    df = pd.DataFrame(rows)
    if simulate and len(df):
        df["sim_lowest"] = np.nan
        df["sim_highest"] = np.nan
        for i in df.spread.sort_values(ascending=False).index[:simulate]:
            p, j_lo, j_hi = kept[i]
            half = links.half(p.trace_file, p.fit_half)
            for j, col in ((j_lo, "sim_lowest"), (j_hi, "sim_highest")):
                link = fits[(p.trace_file, p.fit_half, float(p.rtt), int(p.patterns), j)]
                syn = synthetic_trace(link.model, PATH_FACTOR * int(half.period_ms / 1000.0 / float(p.rtt)), 0,
                                      service=link.service)
                m, _ = _simulate(syn, float(p.rtt), int(p.bmax), int(p.wmax), p.feedback, 4, 300.0, 0, 2)
                df.loc[i, col] = m * syn.mean_rate / link.mean_rate
            log(f"{point_label(p)} simulated modelled links: lowest {df.loc[i, 'sim_lowest']:.3f} "
                f"(prediction {df.loc[i, 'lowest']:.3f})  highest {df.loc[i, 'sim_highest']:.3f} "
                f"(prediction {df.loc[i, 'highest']:.3f})", flush=True)
    if replay_parts and len(df):
        df["part_replay_se"] = np.nan
        df["part_prediction_replay_corr"] = np.nan
        for i in df.spread.sort_values(ascending=False).index[:replay_parts]:
            p = kept[i][0]
            half = links.half(p.trace_file, p.fit_half)
            rep = np.array([_simulate(trace_less_block(half, j, blocks), float(p.rtt), int(p.bmax), int(p.wmax), p.feedback,
                                      4, 60.0, 1, 2)[0] for j in range(blocks)])
            pred = np.array([df.loc[i, f"prediction_less_{j}"] for j in range(blocks)])
            df.loc[i, "part_replay_se"] = jackknife_se(rep) / rep.mean()
            df.loc[i, "part_prediction_se"] = jackknife_se(pred) / pred.mean()
            df.loc[i, "part_prediction_replay_corr"] = float(np.corrcoef(pred, rep)[0, 1])
            for j in range(blocks):
                df.loc[i, f"replay_less_{j}"] = rep[j]
            log(f"{point_label(p)} replays of the parts {' '.join(f'{x:.3f}' for x in rep)}: se "
                f"{100 * df.loc[i, 'part_replay_se']:.1f} % (predictions' {100 * df.loc[i, 'part_prediction_se']:.1f} %), "
                f"correlation {df.loc[i, 'part_prediction_replay_corr']:+.2f}", flush=True)
    return df


def summary(df: pd.DataFrame) -> str:
    out = ["# The prediction over jackknifed fits", "",
           "Spread = (largest - smallest of the fits less one block) / the study's prediction; se = the jackknife "
           "standard error over it; 'met': the replay's 95 % CI meets the prediction +/- 2 se; the study's "
           "prediction within 10 % of the replay, for comparison.", ""]
    body = []
    for lab, g in study_groups(df):
        body.append([lab, len(g), f"{100 * g.spread.median():.1f} %", f"{100 * g.spread.max():.1f} %",
                     f"{100 * g.se.median():.1f} % ({100 * g.se.max():.1f} %)",
                     f"{int(g.in_sample_met.sum())} ({int((g.in_sample_error.abs() <= 0.1).sum())})",
                     f"{int(g.out_of_sample_met.sum())} ({int((g.out_of_sample_error.abs() <= 0.1).sum())})"])
    out.append(md_table(["points", "n", "median spread", "largest", "median se (largest)",
                         "in sample met (within 10 %)", "out of sample met (within 10 %)"], body))
    out += ["", "The band with the fit's uncertainty, `[conservative - k se_c, optimistic + k se_o]` (each bound's own "
            "jackknife standard error): conservative at or below / optimistic at or above the replay's 95 % CI.", ""]
    rows = []
    for k in (0, 1, 2):
        lo, hi = df.conservative - k * df.conservative_se, df.optimistic + k * df.optimistic_se
        cells = [f"k = {k}"]
        for rep, hw in (("replay_fitted_half", "replay_fitted_half_hw"), ("replay", "replay_half_width")):
            c, o = lo <= df[rep] + df[hw], hi >= df[rep] - df[hw]
            cells.append(f"{int(c.sum())} / {int(o.sum())} ({int((c & o).sum())} both) of {len(df)}")
        rows.append(cells)
    out.append(md_table(["band", "in sample", "out of sample"], rows))
    if "sim_lowest" in df and df.sim_lowest.notna().any():
        s = df[df.sim_lowest.notna()]
        out += ["", "At the points of largest spread, the simulated modelled links of the lowest and highest fits:", "",
                md_table(["point", "predictions low / high", "simulated low / high", "move: prediction, simulated"],
                         [[f"{r.trace} {r.rtt_ms} ms {r.fit_half} {r.buffer_bdp} BDP {r.feedback}",
                           f"{r.lowest:.3f} / {r.highest:.3f}", f"{r.sim_lowest:.3f} / {r.sim_highest:.3f}",
                           f"{100 * (r.highest / r.lowest - 1):+.1f} %, {100 * (r.sim_highest / r.sim_lowest - 1):+.1f} %"]
                          for r in s.itertuples()])]
    if "part_replay_se" in df and df.part_replay_se.notna().any():
        s = df[df.part_replay_se.notna()]
        out += ["", "At the points of largest spread, the replays of the parts themselves (4 x 60 s each): the jackknife "
                "standard error of the replays and of the predictions, and their correlation over the parts:", "",
                md_table(["point", "predictions' se", "replays' se", "correlation"],
                         [[f"{r.trace} {r.rtt_ms} ms {r.fit_half} {r.buffer_bdp} BDP {r.feedback}",
                           f"{100 * r.part_prediction_se:.1f} %",
                           f"{100 * r.part_replay_se:.1f} %", f"{r.part_prediction_replay_corr:+.2f}"]
                          for r in s.itertuples()])]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = study_parser(__doc__, "results/fit_spread", SHARED)
    ap.add_argument("--state-limit", type=int, default=150_000, help="the points of at most this many states")
    ap.add_argument("--jackknife", type=int, default=5, help="blocks of the fitted half, each left out in turn")
    ap.add_argument("--simulate", type=int, default=0, help="simulate the modelled links at this many points")
    ap.add_argument("--replay-parts", type=int, default=0,
                    help="replay the parts themselves (4 x 60 s each, seed 1) at this many points of largest spread")
    a0 = ap.parse_known_args(argv)[0]
    if not 3 <= a0.jackknife <= 20:
        print(f"tcpabr: --jackknife={a0.jackknife} is invalid: must be an integer in [3, 20]", file=sys.stderr)
        return 2
    return study_main(ap, argv, lambda study, a: run(study, a.traces_dir, a.state_limit, a.jackknife, a.simulate,
                                                                         a.replay_parts),
                      summary, "fit_spread")


if __name__ == "__main__":
    raise SystemExit(main())
