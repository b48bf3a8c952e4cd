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
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from engine_gap import SHARED  # noqa: E402
from traces_fit import compare_option, md_table, study_main, study_parser  # noqa: E402


#: the columns that name a point in both the study's and engine_gap's CSV
POINT = ["trace", "rtt_ms", "fit_half", "bmax", "feedback"]


def run(study: pd.DataFrame, trace_dir: Path, state_limit: int, log=print) -> pd.DataFrame:
    return compare_option(study, trace_dir, state_limit, "duplicates", ("none", "go-back-n"), "dup", log)


def with_engine_gap(df: pd.DataFrame, eg: pd.DataFrame) -> pd.DataFrame:
    """``df`` with engine_gap's simulation of the modelled link (``model_link``, its CI) and duplicate share."""
    cols = [c for c in ("model_link", "model_link_hw", "model_duplicate_share") if c in eg]
    return df.merge(eg[POINT + cols].drop_duplicates(POINT), on=POINT, how="left")


def _err(pred, ref) -> str:
    e = ((pred - ref) / ref).dropna()
    if not len(e):
        return "-"
    return f"{100 * e.abs().median():.1f} % ({100 * e.median():+.1f} %) [{int((e.abs() <= 0.1).sum())}]"


def _held(ok) -> str:
    return f"{int(ok.sum())}/{len(ok)}"


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
    ref = df.replay_fitted_half
    out += ["", f"Conservative bound at or below the replay of the fitted half: none {_held(df.conservative <= ref)}, "
            f"go-back-n {_held(df.conservative_dup <= ref)}; optimistic at or above: {_held(df.optimistic >= ref)} "
            "(unchanged by the option)."]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = study_parser(__doc__, "results/duplicates", SHARED)
    ap.add_argument("--state-limit", type=int, default=500_000, help="the points of at most this many states")
    ap.add_argument("--engine-gap", default=None, help="analytics/engine_gap.py's CSV for the same study: the "
                    "simulated modelled link beside each point")
    return study_main(ap, argv, lambda study, a: run(study, a.traces_dir, a.state_limit), summary, "duplicates",
                      lambda df, a: df if a.engine_gap is None else with_engine_gap(df, pd.read_csv(a.engine_gap)))


if __name__ == "__main__":
    raise SystemExit(main())
