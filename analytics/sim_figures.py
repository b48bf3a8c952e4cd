"""Simulated counterparts of Figs. 10-13 and 19-22 of the core paper (public API only).

Efficiency vs psi for TCP over ABR with INSTCAP and EFFCAP feedback and for TCP alone
(Delta = 40 time units, buffer 10 packets, M : Delta, N : 8 Delta), and the two-session
fairness study of Section VII (Delta_1 = 240 ms, Delta_2 = 360 ms, buffer 18 packets,
psi normalised by Delta_2; Case 1: M_i : Delta_i, N_i : 12 Delta_i; Case 2:
M = 10, N = 110 for both; each session is fed back half the estimate).

Usage::

    python analytics/sim_figures.py [--quick] [--out DIR]

Also compares the embedded-mode simulation with the Markov renewal bounds of Section III
(Fig. 8 and 9 style) when :mod:`tcpabr_model.markov` is available.

Writes ``sim_single.csv``, ``sim_fairness.csv``, ``sim_vs_analysis.csv`` and
``sim_figures.png`` to DIR
(default ``out/sim_figures`` at the repository root, git-ignored) and prints the tables.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pandas as pd  # noqa: E402

from tcpabr_model.sim import Scenario, simulate  # noqa: E402


def single(psis, reps, dur, seed):
    rows = []
    for psi in psis:
        for fb in ("instcap", "effcap", "none"):
            sc = Scenario.from_normalized(delta=40, bmax=10, psi=psi, feedback=fb, duration=dur)
            r = simulate(sc, reps, seed=seed)
            rows.append({"psi": psi, "feedback": fb, "efficiency": r.efficiency.mean,
                         "half_width": r.efficiency.half_width, "efficiency_wire": r.efficiency_wire.mean,
                         "cell_loss_ratio": r.cell_loss_ratio.mean, "timeouts_per_rep": r.counters["timeouts"] / reps})
            print(f"psi={psi:<6g} {fb:8s} eff={r.efficiency.mean:.4f} +/- {r.efficiency.half_width:.4f}", flush=True)
    return pd.DataFrame(rows)


def fairness(psis, reps, dur, seed):
    rows = []
    cases = {
        "effcap-case1": dict(feedback="effcap", m=(8, 12), n=(88, 132)),
        "effcap-case2": dict(feedback="effcap", m=(10, 10), n=(110, 110)),
        "instcap": dict(feedback="instcap"),
        "tcp-alone": dict(feedback="none"),
    }
    for psi in psis:
        for name, kw in cases.items():
            sc = Scenario(rtt=(0.24, 0.36), tau=psi * 0.36, buffer_packets=18, duration=dur, **kw)
            r = simulate(sc, reps, seed=seed)
            e1, e2 = r.per_connection_efficiency
            rows.append({"psi": psi, "case": name, "efficiency": r.efficiency.mean,
                         "half_width": r.efficiency.half_width, "eff_session1": e1.mean, "hw1": e1.half_width,
                         "eff_session2": e2.mean, "hw2": e2.half_width, "jain": r.fairness.mean})
            print(f"psi={psi:<6g} {name:13s} total={r.efficiency.mean:.4f} s1={e1.mean:.4f} s2={e2.mean:.4f} "
                  f"jain={r.fairness.mean:.4f}", flush=True)
    return pd.DataFrame(rows)


def analysis_comparison(psis, reps, dur, seed):
    """Embedded-mode simulation (like with like) vs the Markov renewal bounds of Section III.

    The analysis counts packets (no ATM overhead), so it is compared with
    ``efficiency_wire``; the simulation uses capacity changes at multiples of Delta,
    INSTCAP measured over Delta and applied at once (S_t = R_{t - Delta}).  Skipped if
    :mod:`tcpabr_model.markov` is not available.
    """
    try:
        from tcpabr_model.markov import Scenario as MarkovScenario
        from tcpabr_model.markov import analyze
    except ImportError as exc:  # pragma: no cover - the analysis is another subpackage
        print(f"analysis comparison skipped: {exc}")
        return pd.DataFrame()
    rows = []
    for psi in psis:
        for fb in ("instcap", "none"):
            a = analyze(MarkovScenario(delta=40, bmax=10, psi=psi, feedback=fb))
            kw = dict(interval=0.2, feedback_delay=0.0) if fb == "instcap" else {}
            sc = Scenario.from_normalized(delta=40, bmax=10, psi=psi, feedback=fb, capacity_mode="embedded",
                                          duration=dur, **kw)
            r = simulate(sc, reps, seed=seed)
            rows.append({"psi": psi, "feedback": fb, "analysis_optimistic": a.optimistic,
                         "analysis_conservative": a.conservative, "sim_efficiency_wire": r.efficiency_wire.mean,
                         "sim_half_width": r.efficiency_wire.half_width})
            print(f"psi={psi:<6g} {fb:8s} analysis [{a.conservative:.4f}, {a.optimistic:.4f}]  "
                  f"sim {r.efficiency_wire.mean:.4f} +/- {r.efficiency_wire.half_width:.4f}", flush=True)
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few psi values, short replications")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                  "out", "sim_figures"))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if args.quick:
        psis, fpsis, reps, dur = [0.1, 1.0, 20.0, 100.0], [0.1, 1.0, 20.0], 4, 500.0
    else:
        psis = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        fpsis = [0.1, 0.3, 1.0, 3.0, 10.0, 20.0, 50.0]
        reps, dur = 10, 2000.0
    os.makedirs(args.out, exist_ok=True)
    df1 = single(psis, reps, dur, args.seed)
    df2 = fairness(fpsis, reps, dur, args.seed)
    df3 = analysis_comparison([2.0, 5.0, 10.0, 20.0, 50.0, 100.0] if not args.quick else [5.0, 50.0],
                              reps, dur, args.seed)
    if not df3.empty:
        df3.to_csv(os.path.join(args.out, "sim_vs_analysis.csv"), index=False)
    df1.to_csv(os.path.join(args.out, "sim_single.csv"), index=False)
    df2.to_csv(os.path.join(args.out, "sim_fairness.csv"), index=False)
    piv = df1.pivot(index="psi", columns="feedback", values="efficiency")
    piv["instcap/none"] = piv["instcap"] / piv["none"]
    piv["effcap/instcap"] = piv["effcap"] / piv["instcap"]
    piv["effcap/none"] = piv["effcap"] / piv["none"]
    print(piv.round(4).to_string())
    print(df2.round(4).to_string(index=False))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 2, figsize=(11, 4))
        for fb, g in df1.groupby("feedback"):
            ax[0].errorbar(g["psi"], g["efficiency"], yerr=g["half_width"], marker="o", label=fb, capsize=2)
        ax[0].set_xscale("log")
        ax[0].set_xlabel("psi = tau / Delta")
        ax[0].set_ylabel("efficiency")
        ax[0].set_title("Delta = 40, Bmax = 10 (cf. Figs. 12-13)")
        ax[0].legend()
        for case, g in df2.groupby("case"):
            ax[1].plot(g["psi"], g["eff_session1"], marker="o", label=f"{case} s1 (240 ms)")
            ax[1].plot(g["psi"], g["eff_session2"], marker="x", ls="--", label=f"{case} s2 (360 ms)")
        ax[1].set_xscale("log")
        ax[1].set_xlabel("psi = tau / Delta_2")
        ax[1].set_ylabel("per-session efficiency")
        ax[1].set_title("Two sessions (cf. Figs. 19-22)")
        ax[1].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "sim_figures.png"), dpi=120)
    except Exception as exc:  # pragma: no cover - plotting is optional
        print(f"plot skipped: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
