"""EFFCAP against INSTCAP and TCP alone across psi, by the analysis, beside the simulator
(seed 004 Figs. 11-13, which the paper could only simulate; docs/model.md sec. 20).

    python analytics/effcap_analysis.py [--psi 1.5,2,...,1000] [--delta 40] [--bmax 10]
        [--effcap 1:8,1:12,2:8] [--replications 4] [--units 2e5] [--seed 0] [--out DIR]

For each psi: the Markov analysis (prediction and band [conservative, optimistic]) of TCP
alone, INSTCAP and EFFCAP(M, N) with one sample per round trip (the chain of the last
M + N - 1 levels), and, unless ``--replications 0``, the cell simulator at the same point in
the embedded mode (capacity changing at multiples of Delta, the feedback measured over Delta
and applied at once; ``validity.embedded_sim_scenario``), with 95 % CIs. Efficiency =
packets delivered (TCP/IP headers counted, no ATM cell tax) over the mean capacity. Writes
``effcap_vs_psi.csv`` and ``effcap_vs_psi.png`` to ``--out`` (default ``out/effcap_analysis``)
and prints the table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from tcpabr_model.markov import Scenario, analyze  # noqa: E402

PSI = (1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)


def _floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"--{name}={text!r} is invalid: must be comma-separated numbers") from None


def _pairs(text: str) -> list[tuple[int, int]]:
    out = []
    for item in text.split(","):
        try:
            m, n = (int(v) for v in item.split(":"))
        except ValueError:
            raise ValueError(f"--effcap={text!r} is invalid: must be comma-separated M:N pairs, e.g. 1:8,2:8") from None
        out.append((m, n))
    return out


def curves(psis, delta: float, bmax: int, effcaps, replications: int, units: float, seed: int) -> pd.DataFrame:
    """One row per (psi, feedback): the analysis and, with ``replications > 0``, the simulation."""
    from tcpabr_model.sim import simulate
    from tcpabr_model.validity import embedded_sim_scenario

    systems = [("TCP alone", "none", {}), ("INSTCAP", "instcap", {})]
    systems += [(f"EFFCAP M={m} N={n}", "effcap", {"effcap_m": m, "effcap_n": n}) for m, n in effcaps]
    rows = []
    for psi in psis:
        for name, fb, kw in systems:
            a = analyze(Scenario(delta=delta, bmax=bmax, psi=psi, feedback=fb, **kw))
            row = {"psi": psi, "system": name, "feedback": fb, **kw, "prediction": a.prediction,
                   "conservative": a.conservative, "optimistic": a.optimistic, "states": a.n_states}
            if replications > 0:
                sc = embedded_sim_scenario(delta=delta, bmax=bmax, psi=psi, feedback=fb, duration_units=units, **kw)
                e = simulate(sc, replications=replications, seed=seed).efficiency_wire
                row.update(sim=e.mean, sim_half_width=e.half_width)
            rows.append(row)
    return pd.DataFrame(rows)


def figure(df: pd.DataFrame, delta: float, bmax: int):
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for i, (name, g) in enumerate(df.groupby("system", sort=False)):
        color = f"C{i}"
        ax.plot(g["psi"], g["prediction"], "-", color=color, label=f"{name} (analysis)")
        ax.fill_between(g["psi"], g["conservative"], g["optimistic"], color=color, alpha=0.15, lw=0)
        if "sim" in g:
            ax.errorbar(g["psi"], g["sim"], yerr=g["sim_half_width"].fillna(0.0), fmt="o", ms=4, color=color,
                        capsize=2)
    ax.set_xscale("log")
    ax.set_xlabel("psi = mean time per capacity state / Delta")
    ax.set_ylabel("efficiency (throughput / mean capacity)")
    ax.set_title(f"Analysis (lines, band shaded) and cell simulator (points, 95 % CI)\n"
                 f"Delta = {delta:g}, B_max = {bmax}, rate ratio 0.5, embedded link")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--psi", default=",".join(f"{v:g}" for v in PSI), help="comma-separated psi values (>= 1)")
    p.add_argument("--delta", type=float, default=40.0, help="round trip in packet times (default 40)")
    p.add_argument("--bmax", type=int, default=10, help="bottleneck buffer, packets (default 10)")
    p.add_argument("--effcap", default="1:8,1:12,2:8", help="EFFCAP M:N pairs, one sample per round trip")
    p.add_argument("--replications", type=int, default=4, help="simulations per point (0: the analysis only)")
    p.add_argument("--units", type=float, default=2e5, help="time units per replication (default 2e5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(ROOT / "out" / "effcap_analysis"))
    args = p.parse_args(argv)
    try:
        if args.replications < 0:
            raise ValueError(f"--replications={args.replications} is invalid: must be >= 0")
        df = curves(_floats(args.psi, "psi"), args.delta, args.bmax, _pairs(args.effcap), args.replications,
                    args.units, args.seed)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "effcap_vs_psi.csv", index=False)
    fig = figure(df, args.delta, args.bmax)
    fig.savefig(out / "effcap_vs_psi.png", dpi=120)
    plt.close(fig)
    cols = ["psi", "system", "prediction", "conservative", "optimistic"] + (["sim", "sim_half_width"]
                                                                            if "sim" in df else [])
    with pd.option_context("display.width", 160):
        print(df[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
