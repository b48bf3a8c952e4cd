"""Silences of two round trips across the epochs: what the chain's timeout rule misses (issue 23).

The study's TCP has a fixed RTO of two round trips, restarted by every new ACK: it expires in every
silence of the ACKs (of the link's service, one round trip earlier) of at least two round trips, lost
packet or not.  The chain times out for want of ACKs after two whole intervals without one (docs/model.md
sec. 11).  A silence of two to three round trips covers two whole epochs only where it is aligned with
them; where it covers one, the chain sees an interval without ACKs followed by one with ACKs, and no
timeout.  ``Scenario(silence='patterns')`` (sec. 11b) times out there with the probability that the first
opportunity of the pattern after the silent epoch comes later in its epoch than the last one before it.

Per point of a trace study (``analytics/traces.py``'s CSV) of at most ``--state-limit`` states, the chain
is solved with both rules (the study's chain otherwise: its patterns, order, window search and loss cycle),
and each is compared with the replays of the fitted half (in sample) and of the other half (out of sample).
``analytics/engine_gap.py`` counts the silences on the links (``trace_silences_per_s``, beside the runs of
two empty epochs that the chain's rule sees).

    python analytics/silence_timeouts.py --study STUDY.csv [--state-limit 500000] [--out DIR]

Findings: docs/traces.md sec. 7.2z.
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



def run(study: pd.DataFrame, trace_dir: Path, state_limit: int, log=print) -> pd.DataFrame:
    return compare_option(study, trace_dir, state_limit, "silence", ("epochs", "patterns"), "silence", log)


def _err(pred, ref) -> str:
    e = ((pred - ref) / ref).dropna()
    return f"{100 * e.abs().median():.1f} % ({100 * e.median():+.1f} %) [{int((e.abs() <= 0.1).sum())}]"


def summary(df: pd.DataFrame) -> str:
    out = ["# Silences of two round trips across the epochs", "",
           "The prediction with `silence='epochs'` (two empty intervals, the default) and `'patterns'` (sec. 11b); "
           "median |error| (median signed) [within 10 %] against the replays.", ""]
    body = []
    for (fb, r), g in list(df.groupby(["feedback", "rtt_ms"])) + [(("all", "all"), df)]:
        body.append([fb, r, len(g), f"{100 * g.change.median():+.2f} % ({100 * g.change.min():+.2f} to "
                     f"{100 * g.change.max():+.2f} %)",
                     _err(g.prediction, g.replay_fitted_half), _err(g.prediction_silence, g.replay_fitted_half),
                     _err(g.prediction, g.replay), _err(g.prediction_silence, g.replay)])
    out.append(md_table(["feedback", "RTT ms", "points", "change (median, range)", "in sample: epochs", "patterns",
                         "out of sample: epochs", "patterns"], body))
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = study_parser(__doc__, "results/silence_timeouts", SHARED)
    ap.add_argument("--state-limit", type=int, default=500_000, help="the points of at most this many states")
    return study_main(ap, argv, lambda study, a: run(study, a.traces_dir, a.state_limit), summary, "silence_timeouts")


if __name__ == "__main__":
    raise SystemExit(main())
