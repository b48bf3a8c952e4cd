"""EFFCAP sampled once per round trip on measured links: the analysis against the link it models and
against the replay (docs/traces.md sec. 7.2u; docs/model.md sec. 20).

    python analytics/effcap_traces.py [--points TRACE:HALF:RTT ...] [--mn 1:1,1:2,2:1]
        [--replications 4] [--seed 1] [--traces-dir ../shared/traces] [--out DIR]

For each point (a half of a shared trace, 0 = A or 1 = B, and a round trip in seconds): the chain
fitted on the half at epoch = RTT with 4 patterns per level (``trace_study.fit_link``), a buffer of
0.5 of the half's own bandwidth-delay product, the study's window; for each EFFCAP(M, N) (1:1 is
INSTCAP) the analysis (``trace_study.analyze_link``) and the cell simulator, with the same estimator
(``trace_study.effcap_round_trip``: measured over each round trip, applied over the next; INSTCAP by
``feedback_timing``), on (a) a trace drawn from the fitted chain and its patterns (the link the
analysis models; ``capacity.synthetic_trace``, seed 1) and (b) the half itself (in sample), 4
replications each, as long as the half (at most 300 s). Efficiency over the capacity in 1500-byte
packets. Writes ``effcap_traces.csv`` to ``--out`` (default ``out/effcap_traces``) and prints a table.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

POINTS = ["TMobile-UMTS-driving.down:0:0.02", "TMobile-UMTS-driving.down:0:0.05", "TMobile-UMTS-driving.down:1:0.05",
          "TMobile-UMTS-driving.down:1:0.1", "Verizon-LTE-short.down:1:0.05", "Verizon-LTE-short.down:1:0.1"]


def _points(specs, traces_dir: Path):
    out = []
    for spec in specs:
        try:
            name, half, rtt = spec.rsplit(":", 2)
            half, rtt = int(half), float(rtt)
        except ValueError:
            raise ValueError(f"--points {spec!r} is invalid: must be TRACE:HALF:RTT, e.g. "
                             "TMobile-UMTS-driving.down:0:0.05") from None
        if half not in (0, 1):
            raise ValueError(f"--points {spec!r} is invalid: HALF must be 0 (A) or 1 (B)")
        path = Path(name) if Path(name).exists() else traces_dir / name
        out.append((path, half, rtt))
    return out


def _mn(text: str):
    try:
        pairs = [tuple(int(v) for v in item.split(":")) for item in text.split(",")]
        if any(len(p) != 2 or min(p) < 1 for p in pairs):
            raise ValueError
    except ValueError:
        raise ValueError(f"--mn={text!r} is invalid: must be comma-separated M:N pairs of integers >= 1") from None
    return pairs


def measure(points, pairs, replications: int, seed: int, log=print) -> pd.DataFrame:
    """One row per (point, M, N)."""
    from tcpabr_model.capacity import read_trace, synthetic_trace
    from tcpabr_model.sim import Scenario, TcpConfig, simulate
    from tcpabr_model.trace_study import (PAYLOAD_BYTES, analyze_link, effcap_round_trip, feedback_timing, fit_link,
                                          trace_halves, window_packets)

    rows = []
    for path, half, rtt in points:
        h = trace_halves(read_trace(str(path)))[half]
        link = fit_link(h, rtt, patterns=4)
        bmax = max(1, round(0.5 * link.mean_rate * rtt))
        wmax = window_packets(float(np.max(link.model.levels)), rtt, bmax)
        dur = min(h.period_ms / 1000.0, 300.0)
        modelled = synthetic_trace(link.model, max(int(dur / rtt), 1), seed, service=link.service)
        for m, n in pairs:
            fb = "instcap" if (m, n) == (1, 1) else "effcap"
            t0 = time.perf_counter()
            a = analyze_link(link, bmax, fb, wmax=wmax, max_states=3_000_000,
                             **({} if fb == "instcap" else {"effcap_m": m, "effcap_n": n}))
            row = {"trace": path.name, "half": "AB"[half], "rtt": rtt, "bmax": bmax, "wmax": wmax, "m": m, "n": n,
                   "prediction": a.prediction, "conservative": a.conservative, "optimistic": a.optimistic,
                   "states": a.n_states, "analysis_seconds": time.perf_counter() - t0}
            timing = feedback_timing("instcap", rtt) if fb == "instcap" else effcap_round_trip(rtt, m, n)
            for label, cap in (("modelled", modelled), ("replay", h)):
                sc = Scenario(feedback=fb, rtt=rtt, buffer_packets=bmax, payload_bytes=PAYLOAD_BYTES, capacity=cap,
                              duration=dur, warmup=min(10.0, dur / 10.0), tcp=TcpConfig(wmax=wmax), **timing)
                e = simulate(sc, replications=replications, seed=seed).efficiency_wire
                row[label], row[f"{label}_half_width"] = e.mean, e.half_width
            row["gap_modelled"] = (row["prediction"] - row["modelled"]) / row["modelled"]
            rows.append(row)
            log(f"{path.name} {'AB'[half]} {rtt:g} s B_max {bmax} M={m} N={n}: prediction {a.prediction:.3f}, modelled "
                f"link {row['modelled']:.3f}, replay {row['replay']:.3f}, {a.n_states:,} states")
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--points", nargs="+", default=POINTS, help="TRACE:HALF:RTT (HALF 0 = A, 1 = B; RTT in seconds)")
    p.add_argument("--mn", default="1:1,1:2,2:1", help="EFFCAP M:N pairs in round trips (1:1 is INSTCAP)")
    p.add_argument("--replications", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--traces-dir", default=str(ROOT.parent / "shared" / "traces"))
    p.add_argument("--out", default=str(ROOT / "out" / "effcap_traces"))
    args = p.parse_args(argv)
    try:
        if args.replications < 2:
            raise ValueError(f"--replications={args.replications} is invalid: must be >= 2 (a confidence interval)")
        pairs = _mn(args.mn)
        points = _points(args.points, Path(args.traces_dir))
        for path, _, _ in points:
            if not path.exists():
                raise ValueError(f"--points: {path} does not exist (give --traces-dir or a path)")
        df = measure(points, pairs, args.replications, args.seed)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "effcap_traces.csv", index=False)
    with pd.option_context("display.width", 200):
        print(df[["trace", "half", "rtt", "bmax", "m", "n", "states", "prediction", "modelled", "replay",
                  "gap_modelled"]].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
