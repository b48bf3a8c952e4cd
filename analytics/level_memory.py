"""Which memory of the level path TCP notices: the link's own path against fitted chains (issue 23).

The study's in-sample error is mostly the capacity model's, not the engine's
(``analytics/engine_gap.py``).  This script finds which part of the capacity model: per point
it replays, with the study's simulator settings, the measured half and five links made from
the chain fitted on it (K by the effective-capacity criterion at epoch = RTT, the study's 4
within-epoch patterns per level), each as long as ten halves:

* ``own_path``: the half's **own** level sequence, each epoch holding a pattern of its level
  (the patterns and levels are the model's, the path is the trace's);
* ``chain1``: a path of the fitted first-order chain (what the study analyses), same patterns;
* ``age``: a path of the chain on (level, epochs spent in it, capped at 4): the trace's
  sojourn laws, first-order otherwise;
* ``chain2``: a path of the second-order chain (``fit_link(..., order=2)``: states are the
  visited (previous, current) level pairs, docs/traces.md sec. 7.2x).

Efficiencies are over the fitted half's mean capacity (the modelled links are scaled by the
fitted half's mean over their own, as ``engine_gap.py`` does).  ``in``: against the replay
of the fitted half; ``out``: against the replay of the other half (the study's held-out
comparison).  Nothing is tuned: every chain is a maximum-likelihood count of the fitted half.

Usage: ``python analytics/level_memory.py [--out DIR] [--quick]`` (about 8 min on 2 cores;
``--quick``: one trace at 100 ms and 2 BDP, 2 x 60 s per replay: a check that it runs, not a measurement).
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

from engine_gap import PATH_FACTOR, SHARED, _sim  # noqa: E402
from traces_fit import write_report  # noqa: E402

from tcpabr_model.capacity import read_trace, synthetic_trace  # noqa: E402
from tcpabr_model.capacity._trace import _patterned_trace  # noqa: E402
from tcpabr_model.trace_study import fit_labels, fit_link, trace_halves, window_packets  # noqa: E402

TRACES = ("Verizon-LTE-short.down", "TMobile-LTE-short.down", "TMobile-UMTS-driving.down")
RTTS = (0.05, 0.1)
BUFFERS = (0.5, 2.0)
PATTERNS = 4            # the study's (analytics/traces.py PATTERNS)
AGE_CAP = 4             # **[choice]** epochs of age kept by the sojourn chain (2, 4 and 8 gave the same)
LINKS = ("own_path", "chain1", "age", "chain2")


def _age_path(lab: np.ndarray, k: int, n: int, rng) -> np.ndarray:
    """A path of the chain on (level, age capped at AGE_CAP), counted cyclically on ``lab``."""
    age = np.ones(lab.size, dtype=np.int64)
    for t in range(1, lab.size):
        age[t] = min(age[t - 1] + 1, AGE_CAP) if lab[t] == lab[t - 1] else 1
    s = lab * AGE_CAP + age - 1
    m = k * AGE_CAP
    c = np.bincount(s * m + np.roll(s, -1), minlength=m * m).reshape(m, m).astype(float)
    rows = c.sum(axis=1)
    cum = np.cumsum(np.divide(c, rows[:, None], out=np.zeros_like(c), where=rows[:, None] > 0), axis=1)
    u = rng.random(n)
    x = np.empty(n, dtype=np.int64)
    x[0] = s[0]
    for t in range(1, n):
        x[t] = min(int(np.searchsorted(cum[x[t - 1]], u[t])), m - 1)
    return x // AGE_CAP


def links_of(half, rtt: float, seed: int) -> dict:
    """The four modelled links of ``half`` at epoch ``rtt`` (module docstring), as traces."""
    one = fit_link(half, rtt, patterns=PATTERNS)
    two = fit_link(half, rtt, patterns=PATTERNS, order=2)
    lab = np.asarray(fit_labels(one.fit, half, rtt), dtype=np.int64)
    e_ms = int(round(rtt * 1000))
    n = PATH_FACTOR * lab.size
    m1 = one.model
    return {
        "own_path": _patterned_trace(m1, one.service, lab, e_ms, np.random.default_rng(seed), "own path"),
        "chain1": synthetic_trace(m1, n, seed, service=one.service),
        "age": _patterned_trace(m1, one.service, _age_path(lab, m1.n_levels, n, np.random.default_rng(seed)),
                                e_ms, np.random.default_rng(seed), "age chain"),
        "chain2": synthetic_trace(two.model, n, seed, service=two.service),
        "_one": one, "_two": two,
    }


def run(traces, rtts, buffers, replications, duration, seed, workers, log=print, trace_dir=SHARED) -> pd.DataFrame:
    rows = []
    for name in traces:
        halves = dict(zip("AB", trace_halves(read_trace(Path(trace_dir) / name))))
        for rtt in rtts:
            made = {h: links_of(halves[h], rtt, seed) for h in "AB"}
            for bf in buffers:
                for fb in ("none", "instcap"):
                    rep, pts = {}, {}
                    for h in halves:
                        other = halves["B" if h == "A" else "A"]
                        # the study's point: the buffer from the replayed half, the window from the fit's peak
                        bmax = max(1, int(round(bf * other.mean_rate * rtt)))
                        wmax = window_packets(float(np.max(made[h]["_one"].model.levels)), rtt, bmax)
                        pts[h] = (bmax, wmax)
                    for h, half in halves.items():
                        d = duration if duration is not None else min(300.0, half.period_ms / 1000.0)
                        rep[h] = {hh: _sim(halves[hh], rtt, pts[h][0], pts[h][1], fb, replications, d, seed, workers,
                                           "timeout-only")[0] for hh in "AB"}
                    for h, half in halves.items():
                        o = "B" if h == "A" else "A"
                        bmax, wmax = pts[h]
                        d = duration if duration is not None else min(300.0, half.period_ms / 1000.0)
                        row = {"trace": name.split(".")[0], "rtt_ms": round(rtt * 1000), "fit_half": h,
                               "buffer_bdp": bf, "bmax": bmax, "wmax": wmax, "feedback": fb,
                               "replay_in": rep[h][h], "replay_out": rep[h][o],
                               "chain1_states": made[h]["_one"].model.n_levels,
                               "chain2_states": made[h]["_two"].model.n_levels}
                        t0 = time.perf_counter()
                        for kind in LINKS:
                            tr = made[h][kind]
                            row[kind] = (_sim(tr, rtt, bmax, wmax, fb, replications, d, seed, workers, "timeout-only")[0]
                                         * tr.mean_rate / made[h]["_one"].mean_rate)
                        rows.append(row)
                        log(f"{row['trace']:22s} {row['rtt_ms']:3d} ms {h} {bf:3.1f} BDP {fb:7s} replay "
                            f"{row['replay_in']:.3f} (other half {row['replay_out']:.3f}) | "
                            + "  ".join(f"{k} {row[k]:.3f}" for k in LINKS)
                            + f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> str:
    out = ["| modelled link | in sample: median \\|error\\|, signed; within 10 % | out of sample: the same |",
           "|---|---|---|"]
    for kind in LINKS:
        cells = []
        for ref in ("replay_in", "replay_out"):
            e = (df[kind] - df[ref]) / df[ref]
            cells.append(f"{100 * e.abs().median():.1f} %, {100 * e.median():+.1f} %; "
                         f"{int((e.abs() <= 0.10).sum())} of {len(df)}")
        out.append(f"| {kind} | {cells[0]} | {cells[1]} |")
    g = df.groupby(["feedback", "buffer_bdp"])
    out += ["", "In sample by feedback and buffer (median signed error):", "",
            "| feedback, buffer | " + " | ".join(LINKS) + " |", "|---" * (len(LINKS) + 1) + "|"]
    for (fb, bf), x in g:
        out.append(f"| {'TCP alone' if fb == 'none' else 'INSTCAP'}, {bf:g} BDP | "
                   + " | ".join(f"{100 * ((x[k] - x.replay_in) / x.replay_in).median():+.1f} %" for k in LINKS) + " |")
    out.append("")
    out.append(f"States of the chains: first order {df.chain1_states.min()}-{df.chain1_states.max()}, second order "
               f"{df.chain2_states.min()}-{df.chain2_states.max()}.")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replications", type=int, default=5)
    ap.add_argument("--duration", type=float, default=None, help="seconds per replication (default: the half's, "
                                                                   "at most 300)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="TMobile-UMTS at 100 ms and 2 BDP only, 2 x 60 s")
    ap.add_argument("--out", default=str(ROOT / "out" / "level_memory"))
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    if a.quick:
        df = run(TRACES[2:], (0.1,), (2.0,), 2, 60.0, a.seed, a.workers)
    else:
        df = run(TRACES, RTTS, BUFFERS, a.replications, a.duration, a.seed, a.workers)
    md = (f"# Which memory of the level path TCP notices\n\n`python analytics/level_memory.py"
          f"{' --quick' if a.quick else ''}` ({len(df)} points, {time.perf_counter() - t0:.0f} s)\n\n" + summary(df))
    write_report(df, Path(a.out), "level_memory", md, t0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
