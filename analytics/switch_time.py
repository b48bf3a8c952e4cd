"""Rate changes at the epochs or inside the round trip, on a link without a grid (issues 25, 23).

docs/model.md sec. 17: ``Scenario(switch_time='uniform')`` moves each change of the rate chain to
an instant uniform inside the connection's round trip, where III-B.1 (``'epoch'``) puts it at an
epoch.  The Fig. 8/9 grid (docs/validity.md) checks it against the simulator's two-state link.
This script checks it where the rate changes at times of its own: a three-level continuous-time
chain (levels 1000, 600 and 300 packets per second, exponential sojourns of a given mean, the
jump chain below) drawn as a trace at 1-ms steps (``capacity.synthetic_trace`` of the chain
discretised at 1 ms: no grid at the round trip) and replayed with the study's simulator settings
(``trace_study._simulate``: 1500-byte opportunities, the timeout-only TCP or ``--tcp sack``, INSTCAP
measured over each round trip and applied over the next), against the analysis of the continuous-time
model with each placement of the change, and for TCP alone with the ACKs spread over the round trip
(``ack_clock='spread'``, docs/model.md sec. 3a).  Nothing is fitted: the analysis gets the generator itself.

Usage: ``python analytics/switch_time.py [--sojourns-ms 30,60,150,600] [--buffers 8,16]
[--replications 4] [--duration 120] [--tcp timeout-only|sack] [--out DIR]`` (``--quick``: one
sojourn, one buffer, 2 x 30 s).
Writes ``switch_time.csv`` to DIR (default ``out/switch_time``) and prints the table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tcpabr_model.capacity import CapacityModel, synthetic_trace  # noqa: E402
from tcpabr_model.markov import Scenario, analyze  # noqa: E402
from tcpabr_model.trace_study import _simulate  # noqa: E402

RTT = 0.03
LEVELS = np.array([1000.0, 600.0, 300.0])            # packets per second
JUMPS = np.array([[0.0, 0.75, 0.25], [0.5, 0.0, 0.5], [0.25, 0.75, 0.0]])   # where a sojourn ends


def link(sojourn_ms: float) -> CapacityModel:
    """The continuous-time chain: every level left at rate 1 / sojourn, to the next by ``JUMPS``."""
    q = 1000.0 / sojourn_ms
    return CapacityModel(LEVELS, generator=q * (JUMPS - np.eye(3)), time_unit=1.0)


#: the analyses compared: the change at the epochs, inside the round trip, and at the epochs with TCP
#: alone's ACKs spread over the round trip (docs/model.md sec. 3a; TCP alone only)
PLACEMENTS = {"epoch": {}, "uniform": {"switch_time": "uniform"}, "spread": {"ack_clock": "spread"}}


def point(cm: CapacityModel, trace, bmax: int, feedback: str, replications: int, duration: float,
          tcp: str = "timeout-only") -> dict:
    sim, hw = _simulate(trace, RTT, bmax, 128, feedback, replications, duration, 1, 2, tcp)
    row = {"bmax": bmax, "feedback": feedback, "sim": sim, "sim_half_width": hw}
    mean = float(cm.stationary @ LEVELS)
    for st, kw in PLACEMENTS.items():
        if "ack_clock" in kw and feedback != "none":
            row.update({st: np.nan, f"{st}_error": np.nan, f"{st}_ok": np.nan, f"{st}_states": np.nan})
            continue
        timer = feedback == "none" and tcp == "timeout-only"
        r = analyze(Scenario(delta=RTT * LEVELS.max(), bmax=bmax, wmax=128, feedback=feedback, capacity=cm, tcp=tcp,
                             loss_cycle="timer" if timer else "paper", **kw))
        eff = r.prediction * r.mean_capacity * LEVELS.max() / mean
        row[st] = eff
        row[f"{st}_error"] = eff / sim - 1.0
        row[f"{st}_ok"] = abs(eff - sim) <= hw + 0.05 * sim
        row[f"{st}_states"] = r.n_states
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sojourns-ms", default="30,60,150,600", help="mean sojourns, ms (comma list)")
    p.add_argument("--buffers", default="8,16", help="B_max in packets (comma list)")
    p.add_argument("--replications", type=int, default=4)
    p.add_argument("--duration", type=float, default=120.0, help="seconds per replication")
    p.add_argument("--out", default=str(ROOT / "out" / "switch_time"))
    p.add_argument("--tcp", choices=("timeout-only", "sack"), default="timeout-only",
                   help="TCP of the replay and the analysis (default timeout-only)")
    p.add_argument("--quick", action="store_true", help="one sojourn (30 ms), B_max 8, 2 x 30 s")
    a = p.parse_args(argv)
    try:
        sojourns = [float(x) for x in a.sojourns_ms.split(",")]
        buffers = [int(x) for x in a.buffers.split(",")]
    except ValueError:
        p.error(f"--sojourns-ms={a.sojourns_ms!r} / --buffers={a.buffers!r} are invalid: comma lists of numbers")
    if a.quick:
        sojourns, buffers, a.replications, a.duration = [30.0], [8], 2, 30.0
    rows = []
    for s in sojourns:
        cm = link(s)
        dm = CapacityModel(LEVELS, transition=np.array(cm.discretize(0.001).transition), epoch=0.001,
                           time_unit=1.0, packet_bytes=1500)
        trace = synthetic_trace(dm, int(max(a.duration * 1000 * 5, 60_000)), seed=3)
        for b in buffers:
            for fb in ("none", "instcap"):
                row = {"sojourn_ms": s, "sojourn_rtts": s / (RTT * 1000),
                       **point(cm, trace, b, fb, a.replications, a.duration, a.tcp)}
                rows.append(row)
                print(f"sojourn {s:g} ms ({row['sojourn_rtts']:.1f} RTT) B_max {b} {fb}: simulated "
                      f"{row['sim']:.3f} +/- {row['sim_half_width']:.3f}; epoch {row['epoch']:.3f} "
                      f"({100 * row['epoch_error']:+.1f} %), uniform {row['uniform']:.3f} "
                      f"({100 * row['uniform_error']:+.1f} %)"
                      + (f", spread {row['spread']:.3f} ({100 * row['spread_error']:+.1f} %)" if fb == "none" else ""),
                      flush=True)
    df = pd.DataFrame(rows)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "switch_time.csv", index=False)
    for st in PLACEMENTS:
        for fb in ("none", "instcap"):
            d = df[(df["feedback"] == fb) & df[f"{st}_ok"].notna()]
            if len(d):
                print(f"{st}, {fb}: within CI + 5 % at {int(d[f'{st}_ok'].astype(bool).sum())} of {len(d)}, "
                      f"median |error| {100 * d[f'{st}_error'].abs().median():.1f} %")
    print(f"written to {out / 'switch_time.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
