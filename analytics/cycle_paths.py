"""The timer cycle's times on the expected service curve against their mean over level paths (issue 23).

The timer cycle (docs/model.md sec. 15) times a loss's recovery on the *expected* service curve from the
loss state's level: ``T_a = S^-1(b + J)``, ``behind = min(w - 1, S(T_a + 1) - S(T_a) + B_max)``, ``T_e =
S^-1(b + J + behind)``, and the cycle grows by ``max(T_a, T_e - 3)``.  ``max`` is convex and the first
passage of a slow path is long, so the mean over the level paths of that term is larger than the term on
the mean curve (Jensen).  This diagnostic measures by how much, per point of a trace study (``analytics/
traces.py``'s CSV) of at most ``--state-limit`` states: for every loss state of the chain (those holding
99 % of the loss mass ``pi p``), ``--paths`` level paths of the fitted chain from its level (seeded), each
serving its levels' mean counts per interval, joined linearly as the engine joins ``C``; the same
expectations given the loss (``J``, ``w``) as the engine; the chain of the window the study's search
solved.  It reports, weighted by ``pi p``:

* ``core_curve`` and ``core_paths``: ``max(T_a, T_e - 3)`` in intervals, on the curve and over the paths;
* ``cycle_share``: the difference, ``sum pi p (paths - curve)``, over the mean cycle length ``E_pi U``: the
  share by which the cycles would lengthen, so roughly the share by which the prediction would fall.

With ``--duplicates CSV`` (``analytics/duplicates.py``'s, which has the modelled link) it compares
``prediction x (1 - share)`` with the simulated modelled link: a diagnostic, not a model.  Nothing is fitted.

    python analytics/cycle_paths.py --study STUDY.csv [--duplicates DUP.csv] [--state-limit 300000]
        [--paths 400] [--seed 0] [--out DIR]

Findings: docs/traces.md sec. 7.2zb.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from engine_gap import SHARED  # noqa: E402
from traces_fit import StudyLinks, md_table, point_label, study_main, study_parser  # noqa: E402

from tcpabr_model.markov.analysis import _analyze, analyze, solved_skeleton  # noqa: E402
from tcpabr_model.markov.skeleton import skeleton_for  # noqa: E402
from tcpabr_model.markov.solvers import DEFAULT_TOL, SOLVE_BLAS_THREADS, blas_threads  # noqa: E402
from tcpabr_model.trace_study import LINK_WINDOW_TAIL, link_scenario  # noqa: E402

POINT = ["trace", "rtt_ms", "fit_half", "bmax", "feedback"]


def _first(S: np.ndarray, need) -> np.ndarray:
    """Per path (rows of ``S``, the served count at whole intervals), the least real ``t`` with ``S(t) >=
    need``, ``S`` joined linearly (the engine's ``_service_time`` on one path); the last row where never."""
    need = np.broadcast_to(np.asarray(need, dtype=float), (S.shape[0],))
    k = np.clip((S < need[:, None] - 1e-12).sum(axis=1), 1, S.shape[1] - 1)
    r = np.arange(S.shape[0])
    lo, hi = S[r, k - 1], S[r, k]
    frac = np.where(hi > lo, (need - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0)
    return np.where(need <= 0.0, 0.0, k - 1 + np.clip(frac, 0.0, 1.0))


def _at(S: np.ndarray, t: np.ndarray) -> np.ndarray:
    k = np.clip(np.floor(t).astype(np.int64), 0, S.shape[1] - 2)
    r = np.arange(S.shape[0])
    return S[r, k] * (1.0 - (t - k)) + S[r, k + 1] * (t - k)


def level_paths(Q: np.ndarray, served: np.ndarray, start: int, n: int, m: int, rng) -> np.ndarray:
    """``m`` paths of the chain ``Q`` from level ``start``, ``n`` intervals: the served count at whole
    intervals, ``(m, n + 1)``."""
    cum = np.cumsum(Q, axis=1)
    lev = np.empty((m, n), dtype=np.int64)
    lev[:, 0] = start
    for j in range(1, n):
        lev[:, j] = np.minimum((rng.random(m)[:, None] > cum[lev[:, j - 1]]).sum(axis=1), Q.shape[0] - 1)
    return np.concatenate([np.zeros((m, 1)), np.cumsum(served[lev], axis=1)], axis=1)


def point(sc, paths: int, seed: int) -> dict:
    r = analyze(sc, window_tail=LINK_WINDOW_TAIL)      # the study's chain: its window search (sec. 19)
    sc = dataclasses.replace(sc, wmax=int(r.scenario.get("window_solved", sc.wmax)))
    info: dict = {}
    with blas_threads(SOLVE_BLAS_THREADS):             # that chain once more, for its stationary law
        r = _analyze(sc, "structured", DEFAULT_TOL, False, info)
    Q, pi = sc.rate_matrix, info["pi"]
    sk = solved_skeleton(sc, skeleton_for(sc))
    served = sk._served()
    C = sk.drain_sums(Q, served, 16)
    t_a, _, t_e = sk.recovery_times(C)
    p, lost, ri, wbar, ahead = sk._loss_expectations()
    w = pi * p
    idx = np.flatnonzero(lost)
    order = idx[np.argsort(-w[idx])]
    idx = np.sort(order[: int(np.searchsorted(np.cumsum(w[order]) / w[order].sum(), 0.99)) + 1])
    curve = np.maximum(t_a, t_e - 3.0)[idx]
    rng = np.random.default_rng(seed)
    S = {lv: level_paths(Q, served, int(lv), C.shape[0] - 1, paths, rng) for lv in np.unique(ri[idx])}
    on_paths = np.empty(idx.size)
    for j, x in enumerate(idx):
        s = S[ri[x]]
        ta = _first(s, ahead[x])
        behind = np.clip(np.minimum(wbar[x] - 1.0, _at(s, ta + 1.0) - _at(s, ta) + sc.bmax), 0.0, None)
        on_paths[j] = np.mean(np.maximum(ta, _first(s, ahead[x] + behind) - 3.0))
    ww = w[idx]
    return {"loss_events_per_interval": float(pi @ p), "core_curve": float(ww @ curve / ww.sum()),
            "core_paths": float(ww @ on_paths / ww.sum()), "mean_cycle": r.mean_cycle_length,
            "cycle_share": float(ww @ (on_paths - curve)) / r.mean_cycle_length}


def run(study: pd.DataFrame, trace_dir: Path, state_limit: int, paths: int, seed: int, log=print) -> pd.DataFrame:
    rows = []
    for p, link, lc in StudyLinks(trace_dir).points(study, state_limit):
        sc = link_scenario(link, int(p.bmax), p.feedback, wmax=int(p.wmax), loss_cycle=lc)
        t0 = time.perf_counter()
        row = {"trace": p.trace_file.split(".")[0], "rtt_ms": int(p.rtt_ms), "fit_half": p.fit_half,
               "buffer_bdp": p.buffer_bdp, "bmax": int(p.bmax), "feedback": p.feedback, **point(sc, paths, seed),
               "seconds": time.perf_counter() - t0}
        log(f"{point_label(p)} max(T_a, T_e - 3): curve {row['core_curve']:.2f}  paths {row['core_paths']:.2f}  "
            f"cycle share {100 * row['cycle_share']:+.1f} %", flush=True)
        rows.append(row)
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> str:
    out = ["# The timer cycle's times over level paths", "",
           "Weighted by the loss mass: `max(T_a, T_e - 3)` on the expected curve and over the paths (intervals), "
           "and the share by which the cycles would lengthen (median, range).", ""]
    has = "model_link" in df and df.model_link.notna().any()
    body = []
    for (fb, r, b), g in list(df.groupby(["feedback", "rtt_ms", "buffer_bdp"])) + [(("all", "all", "all"), df)]:
        row = [fb, r, b, len(g), f"{g.core_curve.median():.2f}", f"{g.core_paths.median():.2f}",
               f"{100 * g.cycle_share.median():+.1f} % ({100 * g.cycle_share.min():+.1f} to "
               f"{100 * g.cycle_share.max():+.1f} %)"]
        if has:
            for pred in (g.prediction_dup, g.prediction_dup / (1.0 + g.cycle_share)):
                e = ((pred - g.model_link) / g.model_link).dropna()
                row.append(f"{100 * e.abs().median():.1f} % ({100 * e.median():+.1f} %) "
                           f"[{int((e.abs() <= 0.1).sum())}]")
        body.append(row)
    out.append(md_table(["feedback", "RTT ms", "buffer BDP", "points", "curve", "paths", "cycle share"]
                        + (["modelled link: go-back-n", "go-back-n / (1 + share)"] if has else []), body))
    if has:
        e = (df.prediction_dup - df.model_link) / df.model_link
        out += ["", f"Correlation of the cycle share with the engine's error (go-back-n) over the points: "
                f"{np.corrcoef(df.cycle_share, e)[0, 1]:.2f}."]
    return "\n".join(out) + "\n"


def _with_duplicates(df: pd.DataFrame, a) -> pd.DataFrame:
    if a.duplicates is None:
        return df
    d = pd.read_csv(a.duplicates)
    return df.merge(d[POINT + [c for c in ("prediction_dup", "model_link") if c in d]], on=POINT, how="left")


def main(argv=None) -> int:
    ap = study_parser(__doc__, "results/cycle_paths", SHARED)
    ap.add_argument("--state-limit", type=int, default=300_000, help="the points of at most this many states")
    ap.add_argument("--paths", type=int, default=400, help="level paths per loss state's level")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--duplicates", default=None, help="analytics/duplicates.py's CSV (with --engine-gap there): "
                    "the modelled link and the go-back-n prediction beside each point")
    return study_main(ap, argv, lambda study, a: run(study, a.traces_dir, a.state_limit, a.paths, a.seed), summary,
                      "cycle_paths", _with_duplicates)


if __name__ == "__main__":
    raise SystemExit(main())
