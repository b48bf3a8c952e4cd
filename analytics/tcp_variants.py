"""TCP variants against timeout-only TCP on the single bottleneck (issue 14 item 3).

For each feedback (INSTCAP, EFFCAP, TCP alone) and psi (1, 10, 50) at Delta = 40, Bmax = 10
(the paper's units, ``Scenario.from_normalized``; fixed RTO 2 Delta, wmax 128), simulates
every TCP variant with the same seed and prints the efficiency with its 95 % half-width,
the change against timeout-only, timeouts and retransmissions per fast retransmit.  The
table in ``docs/simulator.md`` ("TCP variants against timeout-only TCP") is its output.

Usage::

    python analytics/tcp_variants.py [--replications 5] [--duration 2000] [--seed 1]
        [--variants timeout-only,reno,newreno,newreno-steady,sack] [--rto estimator --rto-min 1]
        [--out DIR]

Writes ``tcp_variants.csv`` to DIR (default ``out/tcp_variants``, git-ignored).  Nothing is
tuned toward the independent simulator's numbers quoted in the issue.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pandas as pd  # noqa: E402

from tcpabr_model.runtime.atomic import write_table  # noqa: E402
from tcpabr_model.sim import Scenario, TcpConfig, simulate  # noqa: E402
from tcpabr_model.sim.tcp.variants import VARIANTS  # noqa: E402

FEEDBACKS = ("instcap", "effcap", "none")
PSIS = (1.0, 10.0, 50.0)


def run(replications: int, duration: float, seed: int, variants: tuple[str, ...], rto: str = "fixed",
        rto_min: float = 1.0) -> pd.DataFrame:
    rows = []
    for fb in FEEDBACKS:
        for psi in PSIS:
            for v in variants:
                sc = Scenario.from_normalized(delta=40, bmax=10, psi=psi, feedback=fb, duration=duration,
                                              tcp=TcpConfig(variant=v, rto=rto, rto_min=rto_min))
                r = simulate(sc, replications=replications, seed=seed)
                c = r.counters
                rows.append({"feedback": fb, "psi": psi, "variant": v, "efficiency": r.efficiency.mean,
                             "half_width": r.efficiency.half_width, "timeouts": c["timeouts"],
                             "fast_retransmits": c["fast_retransmits"], "retransmissions": c["retransmissions"],
                             "delivered_segments": c["delivered_segments"]})
    df = pd.DataFrame(rows)
    base = df[df.variant == "timeout-only"].set_index(["feedback", "psi"])["efficiency"]
    df["vs_timeout_only"] = [e / base.get((f, p), float("nan")) - 1.0
                             for f, p, e in zip(df.feedback, df.psi, df.efficiency)]
    return df


def markdown(df: pd.DataFrame, variants: tuple[str, ...]) -> str:
    lines = ["| feedback | psi | " + " | ".join(variants) + " |", "|---|---|" + "---|" * len(variants)]
    for (fb, psi), g in df.groupby(["feedback", "psi"], sort=False):
        g = g.set_index("variant")
        cells = []
        for v in variants:
            x = g.loc[v]
            cell = f"{x.efficiency:.3f} ± {x.half_width:.3f}"
            if v != "timeout-only":
                cell += f" ({100 * x.vs_timeout_only:+.1f} %)"
            cells.append(cell)
        name = "none (TCP alone)" if fb == "none" else fb
        lines.append(f"| {name} | {psi:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replications", type=int, default=5)
    ap.add_argument("--duration", type=float, default=2000.0, help="simulated seconds per replication")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--rto", choices=("fixed", "estimator"), default="fixed",
                    help="fixed: 2 x Delta, no back-off (the paper's testbed); estimator: RFC 6298")
    ap.add_argument("--rto-min", type=float, default=1.0, help="seconds, with --rto estimator (default 1, RFC 6298)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                  "out", "tcp_variants"))
    a = ap.parse_args(argv)
    variants = tuple(v.strip() for v in a.variants.split(",") if v.strip())
    if "timeout-only" not in variants:
        variants = ("timeout-only",) + variants
    t0 = time.perf_counter()
    df = run(a.replications, a.duration, a.seed, variants, a.rto, a.rto_min)
    os.makedirs(a.out, exist_ok=True)
    write_table(df, os.path.join(a.out, "tcp_variants.csv"))
    print(markdown(df, variants))
    print()
    rec = df[df.fast_retransmits > 0].copy()
    rec["retx_per_fast_retransmit"] = rec.retransmissions / rec.fast_retransmits
    print(rec[["feedback", "psi", "variant", "timeouts", "fast_retransmits", "retx_per_fast_retransmit"]]
          .to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    print(f"\n{len(df)} points in {time.perf_counter() - t0:.1f} s; table in {a.out}/tcp_variants.csv")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
