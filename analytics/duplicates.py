"""Go-back-N's duplicates after a timeout, off the chain's credits: measured (issue 23).

After a timeout the study's TCP (timeout-only, go-back-N) sends again from the first unacknowledged
segment.  Segments the receiver already holds are sent and served a second time: after a silence of two
round trips the whole window (nothing was lost), after a loss with several holes the segments received
between them.  The chain's timeout cycle credited its slow start as new data.
``Scenario(duplicates='go-back-n')`` (docs/model.md sec. 15d) takes those segments off the prediction and
the conservative bound.

Per point of a trace study (``analytics/traces.py``'s CSV) of at most ``--state-limit`` states, the chain
is solved with both settings (the study's chain otherwise: its patterns, order, window search and loss
cycle) and each is compared with the replays of the fitted half (in sample) and of the other half (out of
sample), and with ``--engine-gap CSV`` (``analytics/engine_gap.py``'s, same study) with the simulation of
the link the chain models (the engine's own error) and the simulated duplicate share there.

    python analytics/duplicates.py --study STUDY.csv [--engine-gap ENGINE_GAP.csv] [--state-limit 500000]
        [--out DIR]

Findings: docs/traces.md sec. 7.2za.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from engine_gap import SHARED  # noqa: E402
from traces_fit import StudyLinks, md_table, point_label, read_study, study_parser, write_report  # noqa: E402

from tcpabr_model.trace_study import analyze_link  # noqa: E402

#: the columns that name a point in both the study's and engine_gap's CSV
POINT = ["trace", "rtt_ms", "fit_half", "bmax", "feedback"]


def run(study: pd.DataFrame, trace_dir: Path, state_limit: int, log=print) -> pd.DataFrame:
    links, rows = StudyLinks(trace_dir), []
    todo = study[study.prediction.notna() & study.feedback.isin(["none", "instcap"])
                 & (study.analysis_states <= state_limit)]
    for _, p in todo.iterrows():
        name = p.trace_file
        order = int(p.order) if "order" in p.index and pd.notna(p.order) else 1
        link = links.link(name, p.fit_half, float(p.rtt), patterns=int(p.patterns), order=order)
        t0 = time.perf_counter()
        lc = p.loss_cycle if isinstance(p.loss_cycle, str) else None
        a = {d: analyze_link(link, int(p.bmax), p.feedback, wmax=int(p.wmax), loss_cycle=lc, duplicates=d,
                             max_states=4 * state_limit) for d in ("none", "go-back-n")}
        row = {"trace": name.split(".")[0], "rtt_ms": int(p.rtt_ms), "fit_half": p.fit_half,
               "buffer_bdp": p.buffer_bdp, "bmax": int(p.bmax), "feedback": p.feedback,
               "prediction": a["none"].prediction, "prediction_dup": a["go-back-n"].prediction,
               "conservative": a["none"].conservative, "conservative_dup": a["go-back-n"].conservative,
               "optimistic": a["none"].optimistic,
               "change": a["go-back-n"].prediction / a["none"].prediction - 1.0,
               "replay_fitted_half": p.replay_fitted_half, "replay": p.replay, "seconds": time.perf_counter() - t0}
        log(f"{point_label(p)} prediction: none {row['prediction']:.4f}  go-back-n {row['prediction_dup']:.4f}  "
            f"({row['seconds']:.0f} s)", flush=True)
        rows.append(row)
    return pd.DataFrame(rows)


def with_engine_gap(df: pd.DataFrame, eg: pd.DataFrame) -> pd.DataFrame:
    """``df`` with engine_gap's simulation of the modelled link (``model_link``, its CI) and duplicate share."""
    cols = [c for c in ("model_link", "model_link_hw", "model_duplicate_share") if c in eg]
    return df.merge(eg[POINT + cols].drop_duplicates(POINT), on=POINT, how="left")


def _err(pred, ref) -> str:
    e = ((pred - ref) / ref).dropna()
    if not len(e):
        return "-"
    return f"{100 * e.abs().median():.1f} % ({100 * e.median():+.1f} %) [{int((e.abs() <= 0.1).sum())}]"


def _held(bound, ref) -> str:
    return f"{int((bound <= ref).sum())}/{len(bound)}"


def summary(df: pd.DataFrame) -> str:
    out = ["# Go-back-N's duplicates off the credits", "",
           "The prediction with `duplicates='none'` (the default) and `'go-back-n'` (docs/model.md sec. 15d); "
           "median |error| (median signed) [within 10 %] against the simulated modelled link (the engine's own "
           "error), the replay of the fitted half (in sample) and of the other half (out of sample).", ""]
    has_ml = "model_link" in df and df.model_link.notna().any()
    body = []
    groups = list(df.groupby(["feedback", "rtt_ms", "buffer_bdp"])) + [(("all", "all", "all"), df)]
    for (fb, r, b), g in groups:
        body.append([fb, r, b, len(g), f"{100 * g.change.median():+.2f} % ({100 * g.change.min():+.2f} to "
                     f"{100 * g.change.max():+.2f} %)"]
                    + ([_err(g.prediction, g.model_link), _err(g.prediction_dup, g.model_link),
                        f"{100 * g.model_duplicate_share.median():.1f} %" if "model_duplicate_share" in g else "-"]
                       if has_ml else [])
                    + [_err(g.prediction, g.replay_fitted_half), _err(g.prediction_dup, g.replay_fitted_half),
                       _err(g.prediction, g.replay), _err(g.prediction_dup, g.replay)])
    out.append(md_table(["feedback", "RTT ms", "buffer BDP", "points", "change (median, range)"]
                        + (["modelled link: none", "go-back-n", "simulated duplicates"] if has_ml else [])
                        + ["in sample: none", "go-back-n", "out of sample: none", "go-back-n"], body))
    out += ["", "Conservative bound at or below the replay of the fitted half: none "
            f"{_held(df.conservative, df.replay_fitted_half)}, go-back-n {_held(df.conservative_dup, df.replay_fitted_half)}; optimistic at or above: "
            f"{int((df.optimistic >= df.replay_fitted_half).sum())}/{len(df)} (unchanged by the option)."]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = study_parser(__doc__, "results/duplicates", SHARED)
    ap.add_argument("--state-limit", type=int, default=500_000, help="the points of at most this many states")
    ap.add_argument("--engine-gap", default=None, help="analytics/engine_gap.py's CSV for the same study: the "
                    "simulated modelled link beside each point")
    a = ap.parse_args(argv)
    study = read_study(a.study)
    if study is None:
        return 2
    t0 = time.perf_counter()
    df = run(study, a.traces_dir, a.state_limit)
    if a.engine_gap is not None and len(df):
        df = with_engine_gap(df, pd.read_csv(a.engine_gap))
    write_report(df, a.out, "duplicates", summary(df) if len(df) else "no point analysed\n", t0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
