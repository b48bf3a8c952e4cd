"""Figs. 8 and 9: Markov renewal bounds against the simulation (INSTCAP and TCP alone).

Seed 004, Section V-A: Delta = 40 time units (200 ms), buffers 10 and 12 packets, low rate
half the high rate, psi >= 1.  The analysis (optimistic and conservative bounds of Section
III-C) is overlaid with two simulations: the *embedded* capacity mode (rate changes only at
multiples of Delta; INSTCAP measured over Delta and applied at once, S_t = R_{t-Delta}) which
compares like with like, and the *continuous* one (exponential sojourns, s = 30 ms
feedback delayed by Delta: the paper's testbed).  The analysis counts packets and does not
charge the ATM cell tax, so it is compared with the simulation's ``efficiency_wire``.
"""

from __future__ import annotations

import numpy as np

from ._figure_helpers import DELTA_UNITS, WMAX, no_data, ok, rows, series, sig_pos
from ._report import decisive
from ._spec import Claim, Est, FigureSpec, Part, Verdict

BUFFERS = (10, 12)
FEEDBACKS = ("instcap", "none")


def _psis(size):
    if size.name == "tiny":
        return [2.0, 50.0], [2.0, 50.0]
    if size.name == "quick":
        return [float(x) for x in np.round(np.geomspace(1.0, 200.0, 12), 3)], [2.0, 5.0, 20.0, 100.0]
    return ([float(x) for x in np.round(np.geomspace(1.0, 200.0, 30), 3)],
            [1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0])


def parts(size):
    from ..sweep import Grid

    a_psi, s_psi = _psis(size)
    base = {"delta": DELTA_UNITS, "wmax": WMAX, "rate_ratio": 0.5}
    out = [Part("analysis", Grid({"feedback": list(FEEDBACKS), "bmax": list(BUFFERS), "psi": a_psi}, fixed=base),
                {"source": "analysis", "mode": "analysis"})]
    sim = dict(base, **size.sim_fixed())
    # like with like: capacity changes at multiples of Delta, INSTCAP over Delta applied at once
    out.append(Part("simulation", Grid({"bmax": list(BUFFERS), "psi": s_psi},
                                       fixed=dict(sim, feedback="instcap", capacity_mode="embedded",
                                                  interval=0.2, feedback_delay=0.0)),
                    {"source": "simulation", "mode": "embedded"}))
    out.append(Part("simulation", Grid({"bmax": list(BUFFERS), "psi": s_psi},
                                       fixed=dict(sim, feedback="none", capacity_mode="embedded")),
                    {"source": "simulation", "mode": "embedded"}))
    # the paper's testbed: continuous-time chain, s = 30 ms, feedback delayed by Delta
    out.append(Part("simulation", Grid({"feedback": list(FEEDBACKS), "bmax": list(BUFFERS), "psi": s_psi},
                                       fixed=dict(sim, capacity_mode="continuous")),
                    {"source": "simulation", "mode": "continuous"}))
    return out


def draw(df):
    import matplotlib.pyplot as plt

    from ..plot import plot_efficiency_vs_psi

    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    df = ok(df)
    for ax, fb, title in ((axes[0], "instcap", "Fig. 8: TCP over ABR, INSTCAP feedback"),
                          (axes[1], "none", "Fig. 9: TCP alone")):
        a = rows(df, source="analysis", feedback=fb)
        plot_efficiency_vs_psi(a, by="bmax", ax=ax, colors=["C0", "C3"])
        for mode, colors in (("embedded", ["C0", "C3"]), ("continuous", ["C2", "C1"])):
            s = rows(df, source="simulation", feedback=fb, mode=mode)
            if len(s):
                plot_efficiency_vs_psi(s, by="bmax", ax=ax, value="efficiency_wire",
                                       half_width="efficiency_wire_hw", label=f"{mode} sim",
                                       colors=colors, markers="o^" if mode == "embedded" else "sD")
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("efficiency (packets / mean capacity; no ATM tax)")
    fig.suptitle(r"$\Delta$ = 40 time units (200 ms), buffers 10 and 12 packets, low rate = high / 2, "
                 r"$W_{max}$ = 128", fontsize=10)
    fig.tight_layout()
    return fig


# ---- claims ------------------------------------------------------------------------

def _gap(sim: Est, cons: float, opt: float) -> Est:
    """Relative distance of the simulation to the band [cons, opt] (0 inside it)."""
    if sim.mean > opt:
        return sim.rel_to(opt)
    if sim.mean < cons:
        return sim.rel_to(cons)
    return Est(0.0, sim.hw / sim.mean)


def _pairs(df, fb, mode, bmax, psi_min=None, psi_max=None):
    """[(psi, sim Est (efficiency_wire), conservative, optimistic)] at the simulated psi values."""
    out = []
    a = ok(rows(df, source="analysis", feedback=fb, bmax=bmax))
    for psi, e in series(df, "psi", "efficiency_wire", source="simulation", feedback=fb, mode=mode,
                         bmax=bmax).items():
        if (psi_min is not None and psi < psi_min) or (psi_max is not None and psi > psi_max):
            continue
        m = a[np.isclose(a["psi"].astype(float), psi, rtol=1e-6)]
        if len(m) == 0:  # analysis grid may not contain the psi: interpolate in log psi
            if len(a) < 2:
                continue
            aa = a.sort_values("psi")
            lp = np.log(aa["psi"].astype(float))
            cons = float(np.interp(np.log(psi), lp, aa["conservative"]))
            opt = float(np.interp(np.log(psi), lp, aa["optimistic"]))
        else:
            cons, opt = float(m["conservative"].iloc[0]), float(m["optimistic"].iloc[0])
        out.append((psi, e, cons, opt))
    return out


def _check_match(df):
    lines, within, worsts = [], {}, {}
    for mode in ("embedded", "continuous"):
        worst = 0.0
        n = 0
        for b in BUFFERS:
            gaps = [(psi, _gap(e, c, o)) for psi, e, c, o in _pairs(df, "instcap", mode, b, psi_min=5.0)]
            n += len(gaps)
            if gaps:
                worst = max(worst, max(abs(g.mean) for _, g in gaps))
                lines.append(f"INSTCAP {mode} B={b}, gap to the band: "
                             + "; ".join(f"psi {p:g}: {g.fmt(1, pct=True)}" for p, g in gaps))
        if n:
            within[mode], worsts[mode] = worst <= 0.05, worst
            lines.append(f"{mode}: largest |gap| {100 * worst:.1f} % over psi >= 5")
    if not within:
        return no_data("INSTCAP simulation at psi >= 5")
    good = [m for m, w in within.items() if w]
    gaps = "; ".join(f"{m}: largest |gap| {decisive(worsts[m], 0.05, 1, 100)} % "
                     f"({'<=' if within[m] else '>'} 5 %)" for m in within)
    if len(good) == len(within):
        st, why = "supported", "every simulated point at psi >= 5 is within 5 % of the bound band, in both modes"
    elif good:
        st, why = "partly", f"within 5 % of the band in the {good[0]} mode only"
    else:
        st, why = "not supported", "the simulation is more than 5 % away from the band at some psi >= 5 in both modes"
    return Verdict(st, f"{why} ({gaps})", tuple(lines))


def _check_small_psi(df):
    lines, excess, above_all = [], [], True
    for mode in ("embedded", "continuous"):
        for b in BUFFERS:
            for psi, e, c, o in _pairs(df, "instcap", mode, b, psi_max=3.0):
                x = e.rel_to(o)
                excess.append(x)
                above_all &= e.mean > o
                lines.append(f"INSTCAP {mode} B={b} psi {psi:g}: sim {e.fmt()} vs analysis "
                             f"[{c:.3f}, {o:.3f}], sim / optimistic - 1 = {x.fmt(1, pct=True)}")
    if not excess:
        return no_data("INSTCAP simulation at psi <= 3")
    inside = all(0.05 <= x.mean <= 0.25 for x in excess)
    if above_all and inside:
        return Verdict("supported", "the simulation is above both bounds by 5-25 % at every psi <= 3 (excess over the "
                       f"optimistic bound {decisive(min(x.mean for x in excess), 0.05, 1, 100, sign=True)} % to "
                       f"{decisive(max(x.mean for x in excess), 0.25, 1, 100, sign=True)} %)", tuple(lines))
    out = [x.mean for x in excess if not 0.05 <= x.mean <= 0.25]
    if above_all:
        return Verdict("partly", "the simulation is above both bounds at psi <= 3, but the excess over the optimistic "
                       f"bound is outside 5-25 % at {len(out)} of {len(excess)} points ("
                       + ", ".join(f"{decisive(x, 0.25 if x > 0.25 else 0.05, 1, 100, sign=True)} %" for x in out) + ")",
                       tuple(lines))
    n_below = sum(x.mean <= 0 for x in excess)
    return Verdict("not supported", f"the simulation is not above the optimistic bound at {n_below} of "
                   f"{len(excess)} points with psi <= 3", tuple(lines))


def _check_tcp_alone(df):
    lines, short, below_all = [], [], True
    for mode in ("embedded", "continuous"):
        for b in BUFFERS:
            pts = _pairs(df, "none", mode, b)
            for psi, e, c, o in pts:
                s = Est(1.0) - e / o
                short.append(s)
                below_all &= e.mean < o
            if pts:
                lines.append(f"TCP alone {mode} B={b}, 1 - sim / optimistic: "
                             + "; ".join(f"psi {p:g}: {(Est(1.0) - e / o).fmt(1, pct=True)}" for p, e, c, o in pts))
    if not short:
        return no_data("TCP-alone simulation")
    worst = max(s.mean for s in short)
    lines.append(f"largest shortfall below the optimistic bound: {100 * worst:.1f} %")
    if below_all and 0.15 <= worst <= 0.25:
        return Verdict("supported", "the simulation is below the optimistic analysis at every psi, by at most "
                       f"{100 * worst:.0f} % (within 15-25 %)", tuple(lines))
    if below_all:
        return Verdict("partly", f"below the analysis everywhere, but the largest shortfall is {100 * worst:.0f} % "
                       "(outside 15-25 %)", tuple(lines))
    above = sorted({psi for mode in ("embedded", "continuous") for b in BUFFERS
                    for psi, e, c, o in _pairs(df, "none", mode, b) if e.mean >= o})
    return Verdict("not supported", "the TCP-alone simulation is above the optimistic analysis at psi "
                   + ", ".join(f"{p:g}" for p in above) + f" (elsewhere below it, by up to {100 * worst:.0f} %)",
                   tuple(lines))


def _check_buffers(df):
    lines, gains = [], {}
    for fb in FEEDBACKS:
        s10 = series(df, "psi", "efficiency", source="simulation", feedback=fb, mode="continuous", bmax=10)
        s12 = series(df, "psi", "efficiency", source="simulation", feedback=fb, mode="continuous", bmax=12)
        common = sorted(set(s10) & set(s12))
        if not common:
            continue
        rel = [s12[p].rel_to(s10[p]) for p in common]
        gains[fb] = Est.average(rel)
        lines.append(f"{'INSTCAP' if fb == 'instcap' else 'TCP alone'} (continuous sim), B=12 / B=10 - 1: "
                     + "; ".join(f"psi {p:g}: {r.fmt(1, pct=True)}" for p, r in zip(common, rel))
                     + f"; average {gains[fb].fmt(1, pct=True)}")
    if len(gains) < 2:
        return no_data("both buffers of the continuous simulation")
    gi, gt = gains["instcap"], gains["none"]
    tcp_worse = sig_pos(gt)
    abr_flat = abs(gi.mean) <= 0.5 * abs(gt.mean)
    ratio = abs(gi.mean) / abs(gt.mean) if gt.mean else float("inf")
    ratio_txt = decisive(ratio, 0.5, 3) if gt.mean else "inf"
    lines.append(f"|INSTCAP average| / |TCP alone average| = {100 * abs(gi.mean):.2f} % / {100 * abs(gt.mean):.2f} % "
                 f"= {ratio_txt} (the rule asks at most 0.5)")
    tcp_txt = (f"TCP alone's average B=12 / B=10 - 1 is {gt.fmt(4, pct=True)}, "
               + ("significantly > 0 (95 % CI above 0)" if tcp_worse else
                  f"not significantly > 0 (95 % CI {'includes 0' if gt.hi >= 0 else 'below 0'})"))
    abr_txt = (f"INSTCAP's average change {gi.fmt(4, pct=True)} is {ratio_txt} times TCP alone's in magnitude, "
               + ("at most the 0.5 ('at most half') the rule allows" if abr_flat else
                  "above the 0.5 ('at most half') the rule allows"))
    if tcp_worse and abr_flat:
        return Verdict("supported", f"both halves hold: {tcp_txt}; {abr_txt}", tuple(lines))
    if tcp_worse or abr_flat:
        return Verdict("partly", "only one half holds: " + (f"TCP alone is buffer-sensitive ({tcp_txt}), but "
                       f"{abr_txt}" if tcp_worse else f"TCP over ABR is insensitive ({abr_txt}), but {tcp_txt}"),
                       tuple(lines))
    return Verdict("not supported", f"neither half holds: {tcp_txt}; {abr_txt}", tuple(lines))


CLAIMS = (
    Claim("Fig. 8", "We see that, except for very small ψ, the analysis and the simulations match to within a few "
          "percent.",
          "CHOICE: 'very small' = psi < 5, 'a few percent' = 5 %. Gap = relative distance of the simulated "
          "efficiency_wire to the band [conservative, optimistic] (0 inside). Supported if every INSTCAP point at "
          "psi >= 5 (both buffers) is within 5 % in both the embedded and the continuous simulation; partly if in "
          "one mode only.", _check_match),
    Claim("Fig. 8", "Both the analyses are less than the observed throughputs by about 10%–20% for small ψ.",
          "CHOICE: 'small' = psi <= 3, 'about 10-20 %' = 5-25 %. Supported if the INSTCAP simulation exceeds the "
          "optimistic bound by 5-25 % at every such point (both modes, both buffers); partly if above both bounds "
          "but by another amount.", _check_small_psi),
    Claim("Fig. 9", "We can see that the simulation results give a throughput of upto 20% less than the analytical "
          "ones.",
          "Supported if the TCP-alone simulation is below the optimistic bound at every psi and the largest "
          "shortfall is 15-25 % (CHOICE: 'up to 20 %' +/- 5 points); partly if below but by another amount.",
          _check_tcp_alone),
    Claim("Figs. 8-9", "We see from Figs. 8 and 9 that ABR makes TCP throughput insensitive to buffer size "
          "variations. However, with TCP alone, there is a worsening of throughput with buffer reduction.",
          "On the continuous simulation: average over psi of efficiency(B=12) / efficiency(B=10) - 1. Supported "
          "if TCP alone's is significantly > 0 (95 % CI) and INSTCAP's is at most half of it in magnitude.",
          _check_buffers),
)

SPEC = FigureSpec(
    key="fig08_09", numbers=(8, 9), title="Analysis bounds and simulation: INSTCAP (Fig. 8) and TCP alone (Fig. 9)",
    parts=parts, draw=draw, claims=CLAIMS,
    settings="Delta = 40 time units (200 ms at 5 ms per 500-byte packet), buffers 10 and 12 packets, rate ratio "
             "0.5, W_max = 128 packets (CHOICE), analysis psi in [1, 200]; simulation: embedded mode (interval = "
             "Delta, feedback delay 0) and continuous mode (s = 30 ms, feedback delay Delta), efficiency_wire "
             "(no ATM tax, like the analysis).")
