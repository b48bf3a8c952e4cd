"""Small buffers at constant capacity: the timer cycle against a deterministic simulation (issue 23).

At RTT 20 ms the trace study's engine is a median 15-18 % above the link it models
(docs/traces.md sec. 7.2x). The cellular links serve a few packets per round trip there and the
buffers are 1-19 packets. This script takes that regime without any variation: a constant link
(``rate_ratio=1``), TCP alone, the timeout-only TCP, a pipe of ``Delta`` packets and a buffer of
``B_max``. The simulator is then deterministic, so every difference is the chain's cycle.

Per point it prints:

* the simulator's efficiency, its timeouts per 1000 time units, the share of them whose segment
  was first sent in slow start, and the first ssthresh values after the warm-up (the cycle's
  cascade: e.g. ``16, 8, 4`` is a loss in congestion avoidance, two failed slow starts, then
  congestion avoidance from 4);
* the analysis with the trace study's settings (``loss_cycle='timer'``, ``ca_increment='counter'``,
  ``trace_study.LINK_LOSS_CYCLE`` and ``LINK_CA_INCREMENT``): prediction, its loss events per 1000
  time units, and the slow-start codes of its loss cycles after sec. 15's and sec. 15b's rules
  (``m -> m'``, the mass-weighted main one).

    python analytics/small_pipes.py [--out DIR] [--quick]

It takes about 10 s (``--quick``: two points). Findings: docs/validity.md, "Small buffers at
constant capacity".
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from tcpabr_model.markov import Scenario, analyze  # noqa: E402
from tcpabr_model.markov.analysis import skeleton_for  # noqa: E402
from tcpabr_model.markov.slow_start import with_go_back_n_burst  # noqa: E402
from tcpabr_model.sim import simulate  # noqa: E402
from tcpabr_model.trace_study import LINK_CA_INCREMENT, LINK_LOSS_CYCLE  # noqa: E402
from tcpabr_model.validity import sim_scenario  # noqa: E402
from traces_fit import md_table, write_report  # noqa: E402

#: (Delta, B_max): pipes of 3-26 packets, buffers of 2 and 5 (the trace study's 0.5 BDP at 20 ms)
POINTS = ((3, 2), (3, 5), (5, 2), (5, 5), (11, 2), (11, 5), (26, 2), (26, 5))
WMAX = 64
UNITS = 20000.0


def simulated(delta: int, bmax: int, units: float = UNITS) -> dict:
    """The deterministic simulation (one replication, the trace sampled every time unit)."""
    unit = 500 / 100e3      # one time unit: a 500-byte packet at 100 kB/s (validity.sim_scenario)
    sc = sim_scenario("embedded", delta=float(delta), bmax=bmax, psi=20.0, wmax=WMAX, feedback="none",
                      rate_ratio=1.0, duration_units=units, interval=unit)
    r = simulate(sc, replications=1, seed=0, trace=True)
    ss = r.trace.ssthresh[:, 0]
    changes = ss[np.flatnonzero(np.diff(ss) != 0) + 1]
    c = r.counters
    return {"sim": float(r.efficiency_wire.mean), "sim_timeouts_per_kunit": c["timeouts"] / units * 1000.0,
            "sim_slow_start_share": c["timeouts_in_slow_start"] / max(c["timeouts"], 1),
            "sim_ssthresh": ", ".join(str(int(v)) for v in changes[len(changes) // 2:][:6])}


def analysed(delta: int, bmax: int) -> dict:
    """The analysis with the trace study's loss cycle and window growth, and its slow-start codes."""
    sc = Scenario(delta=float(delta), bmax=bmax, psi=20.0, rate_ratio=1.0, wmax=WMAX, feedback="none",
                  loss_cycle=LINK_LOSS_CYCLE, ca_increment=LINK_CA_INCREMENT)
    r = analyze(sc)
    sk = skeleton_for(sc)
    Q = sc.rate_matrix
    after = with_go_back_n_burst(sk, sk.with_slow_start_loss(Q), Q)
    m_before = int(np.bincount(sk.ls_m, sk.ls_prob).argmax())
    m_after = int(np.bincount(after.ls_m, after.ls_prob).argmax())
    return {"prediction": float(r.prediction),
            "analysis_losses_per_kunit": float(r.loss_probability) / (float(r.mean_cycle_length) * delta) * 1000.0,
            "chain_codes": f"{m_before} -> {m_after}",
            "regeneration_codes": f"{int(np.flatnonzero(sk.regenerations()).min())}+"}


def run(points=POINTS, units: float = UNITS, log=print) -> pd.DataFrame:
    rows = []
    for delta, bmax in points:
        row = {"delta": delta, "bmax": bmax, **simulated(delta, bmax, units), **analysed(delta, bmax)}
        row["error"] = (row["prediction"] - row["sim"]) / row["sim"]
        rows.append(row)
        log(f"Delta {delta:3d} B_max {bmax}: simulator {row['sim']:.4f} (ssthresh {row['sim_ssthresh']}), "
            f"analysis {row['prediction']:.4f} ({100 * row['error']:+.1f} %, codes {row['chain_codes']})", flush=True)
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> str:
    header = ["Delta", "B_max", "simulator", "timeouts / 1000 units", "in slow start", "ssthresh after warm-up",
              "analysis", "error", "losses / 1000 units", "codes m -> m'", "regeneration codes"]
    body = [[r.delta, r.bmax, f"{r.sim:.4f}", f"{r.sim_timeouts_per_kunit:.2f}", f"{100 * r.sim_slow_start_share:.0f} %",
             r.sim_ssthresh, f"{r.prediction:.4f}", f"{100 * r.error:+.1f} %", f"{r.analysis_losses_per_kunit:.2f}",
             r.chain_codes, r.regeneration_codes] for r in df.itertuples()]
    return ("# Small buffers at constant capacity: the timer cycle against a deterministic simulation\n\n"
            f"TCP alone, timeout-only, W_max {WMAX}, rate ratio 1; simulator: one replication of "
            f"{df.attrs.get('units', UNITS):g} time units.\n\n" + md_table(header, body) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("results/small_pipes"))
    ap.add_argument("--quick", action="store_true", help="two points, 4000 time units")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    units = 4000.0 if a.quick else UNITS
    df = run(POINTS[4:6] if a.quick else POINTS, units)
    df.attrs["units"] = units
    write_report(df, a.out, "small_pipes", summary(df), t0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
