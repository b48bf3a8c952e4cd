"""Figs. 14-16: the choice of N for EFFCAP (Section VI-A-1), physical units.

Seed 004, Section VI-A: high rate 100 kB/s, low rate 50 kB/s, 500-byte packets, s = 30 ms,
buffer 10 packets (5 kB), EFFCAP with ``M : Delta`` (M = ceil(Delta / s)) and
``N : k Delta`` (N = (k - 1) ceil(Delta / s)).
Fig. 14: Delta = 200 ms (M = 7), N : 2, 4, 8 Delta (N = 7, 21, 49), tau from 32 ms to 40 s.
Fig. 15: tau = 100 ms; Fig. 16: tau = 1000 ms; Delta from 50 to 500 ms in both.
"""

from __future__ import annotations

from ._figure_helpers import DELTA, S, WMAX, ceil_div, n_of_k, no_data, ok, rows, series, sig_pos
from ._spec import Claim, Est, FigureSpec, Part, Verdict

FIG14_K = (2, 4, 8)
FIG15_K = (2, 4, 8, 12)  # CHOICE: the paper names N : 4 Delta and the 8-12 Delta rule; we plot 2, 4, 8, 12


def _sizes(size):
    if size.name == "tiny":
        return [0.1, 4.0], [0.1, 0.5], (2, 8)
    if size.name == "quick":
        return [0.032, 0.08, 0.15, 0.4, 2.0, 10.0, 40.0], [0.05, 0.1, 0.2, 0.5], (2, 12)
    return ([0.032, 0.05, 0.08, 0.1, 0.15, 0.2, 0.4, 1.0, 2.0, 4.0, 10.0, 20.0, 40.0],
            [0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5], FIG15_K)


def _point(rtt, tau, k, size):
    return dict(feedback="effcap", rtt=rtt, tau=tau, buffer_packets=10, interval=S, m=ceil_div(rtt), n=n_of_k(k, rtt),
                tcp_wmax=WMAX, **size.sim_fixed())


def parts(size):
    from ..sweep import Grid

    taus, deltas, ks = _sizes(size)
    out = []
    for k in (FIG14_K if size.name != "tiny" else (2, 8)):
        out.append(Part("simulation", Grid.from_points([_point(DELTA, t, k, size) for t in taus]),
                        {"figure": "14", "k": k}))
    for fig, tau in (("15", 0.1), ("16", 1.0)):
        for k in ks:
            out.append(Part("simulation", Grid.from_points([_point(d, tau, k, size) for d in deltas]),
                            {"figure": fig, "k": k}))
    return out


def draw(df):
    import matplotlib.pyplot as plt

    from ..plot import plot_efficiency_vs_psi

    df = ok(df)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8), sharey=True)
    for ax, f, title in ((axes[0], "14", "Fig. 14: Delta = 200 ms, tau 32 ms - 40 s"),
                         (axes[1], "15", "Fig. 15: tau = 100 ms, Delta 50-500 ms"),
                         (axes[2], "16", "Fig. 16: tau = 1000 ms, Delta 50-500 ms")):
        s = rows(df, figure=f)
        if len(s):
            s = s.assign(N=[f"{int(k):02d} Delta" for k in s["k"]])
            plot_efficiency_vs_psi(s, by="N", ax=ax, ylim=None)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("efficiency (IP bytes / mean capacity 75 kB/s)")
    axes[0].set_xlabel(r"$\psi = \tau/\Delta$ ($\tau$ varied; dimensionless)")
    axes[1].set_xlabel(r"$\psi = \tau/\Delta$ ($\Delta$ varied, right to left 50 to 500 ms)")
    axes[2].set_xlabel(r"$\psi = \tau/\Delta$ ($\Delta$ varied, right to left 50 to 500 ms)")
    fig.suptitle("EFFCAP, M : Delta, buffer 10 packets, 100 / 50 kB/s, s = 30 ms", fontsize=10)
    fig.tight_layout()
    return fig


def _by_k(df, figure, x="psi"):
    ks = sorted(set(int(k) for k in ok(rows(df, figure=figure))["k"].dropna()))
    return {k: series(df, x, figure=figure, k=k) for k in ks}


def _check_14(df):
    s = _by_k(df, "14")
    if len(s) < 2:
        return no_data("Fig. 14 with two or more N")
    lo, hi = min(s), max(s)
    pts = [p for p in sorted(set(s[lo]) & set(s[hi])) if 0.3 < p < 1.0]
    if not pts:
        return no_data("Fig. 14 at 0.3 < psi < 1")
    lines = tuple(f"psi {p:g}: " + ", ".join(f"N : {k} Delta {s[k][p].fmt()}" for k in sorted(s) if p in s[k])
                  + f"; N : {hi} Delta - N : {lo} Delta = {(s[hi][p] - s[lo][p]).fmt()}" for p in pts)
    sig = [sig_pos(s[hi][p] - s[lo][p]) for p in pts]
    mono = all(all(s[a][p].mean <= s[b][p].mean for a, b in zip(sorted(s), sorted(s)[1:]) if p in s[a] and p in s[b])
               for p in pts)
    if all(sig) and mono:
        return Verdict("supported", f"efficiency grows with N at every psi in (0.3, 1), significantly from "
                       f"N : {lo} Delta to N : {hi} Delta", lines)
    if any(sig):
        return Verdict("partly", "larger N helps significantly at some psi in (0.3, 1) only, or not monotonically",
                       lines)
    return Verdict("not supported", "no significant gain from a larger N for 0.3 < psi < 1", lines)


def _gain(df, figure, pred):
    s = _by_k(df, figure, x="rtt")
    if len(s) < 2:
        return None, None, ()
    lo, hi = min(s), max(s)
    tau = 0.1 if figure == "15" else 1.0
    d = {r: s[hi][r].rel_to(s[lo][r]) for r in sorted(set(s[lo]) & set(s[hi])) if pred(tau / r)}
    lines = tuple(f"Delta {1000 * r:g} ms (psi {tau / r:g}): N : {hi} Delta {s[hi][r].fmt()} vs N : {lo} Delta "
                  f"{s[lo][r].fmt()}, ratio - 1 = {v.fmt(1, pct=True)}" for r, v in d.items())
    return d, (lo, hi), lines


def _check_15(df):
    d, kk, lines = _gain(df, "15", lambda p: True)
    if not d:
        return no_data("Fig. 15 with two or more N")
    avg = Est.average(d.values())
    lines = lines + (f"average gain {avg.fmt(1, pct=True)}",)
    if all(sig_pos(v) for v in d.values()) and avg.mean >= 0.05:
        return Verdict("supported", f"N : {kk[1]} Delta beats N : {kk[0]} Delta significantly at every Delta, by "
                       f"{100 * avg.mean:.0f} % on average", lines)
    if sig_pos(avg):
        return Verdict("partly", f"a larger N helps on average ({100 * avg.mean:.1f} %) but not significantly at "
                       "every Delta, or by less than 5 %", lines)
    n_up = sum(sig_pos(v) for v in d.values())
    n_down = sum(v.hi < 0 for v in d.values())
    return Verdict("not supported", f"a larger N is significantly better at {n_up} and significantly worse at "
                   f"{n_down} of {len(d)} Delta values; average {100 * avg.mean:+.1f} %", lines)


def _check_15_level(df):
    s = _by_k(df, "15", x="rtt")
    if not s:
        return no_data("Fig. 15")
    hi = max(s)
    best_r = max(s[hi], key=lambda r: s[hi][r].mean)
    b = s[hi][best_r]
    lines = (f"largest efficiency with N : {hi} Delta: {b.fmt()} at Delta {1000 * best_r:g} ms",
             "our efficiency charges the full ATM overhead (ceiling 540/636 = 0.849, so the minimum rate tracked "
             "exactly gives 0.667 x 0.849 = 0.566); the paper's 'about 90 %' ceiling would give 0.60")
    if 0.55 <= b.mean <= 0.65:
        return Verdict("supported", "the largest efficiency with the largest N is within 0.05 of 0.6", lines)
    if 0.5 <= b.mean <= 0.7:
        return Verdict("partly", "the largest efficiency with the largest N is within 0.1 of 0.6 but not 0.05",
                       lines)
    return Verdict("not supported", "the efficiency with the largest N is not near 0.6", lines)


def _check_16(df):
    d, kk, lines = _gain(df, "16", lambda p: p < 8)
    if not d:
        return no_data("Fig. 16 at psi < 8")
    if all(sig_pos(v) for v in d.values()):
        return Verdict("supported", f"N : {kk[1]} Delta beats N : {kk[0]} Delta significantly at every psi < 8", lines)
    if any(sig_pos(v) for v in d.values()):
        return Verdict("partly", "a larger N helps significantly at some psi < 8 only", lines)
    return Verdict("not supported", "a larger N does not help significantly at psi < 8", lines)


def _check_16_large(df):
    d, kk, lines = _gain(df, "16", lambda p: p > 10)
    if not d:
        return no_data("Fig. 16 at psi > 10")
    small_better = all(v.mean <= 0 for v in d.values())
    negligible = all(abs(v.mean) <= 0.03 for v in d.values())
    if small_better and negligible:
        return Verdict("supported", "at psi > 10 the smaller N is ahead, by at most 3 % (CHOICE: 'negligible')", lines)
    if negligible:
        return Verdict("partly", "at psi > 10 the difference between N values is negligible (<= 3 %), but the "
                       "smaller N is not ahead everywhere", lines)
    worst = max(d.values(), key=lambda v: abs(v.mean))
    return Verdict("not supported", f"at psi > 10 the N values differ by up to {100 * abs(worst.mean):.0f} % "
                   f"(the {'smaller' if worst.mean < 0 else 'larger'} N ahead), more than the 3 % called "
                   "negligible", lines)


def _check_absolute(df):
    s15, s16 = _by_k(df, "15", x="rtt"), _by_k(df, "16", x="rtt")
    lines, sig = [], []
    for k in sorted(set(s15) & set(s16)):
        if 0.05 in s15[k] and 0.5 in s16[k]:
            a, b = s15[k][0.05], s16[k][0.5]
            r = a.rel_to(b)
            sig.append(abs(r.mean) >= 0.05 and (r.lo > 0 or r.hi < 0))
            lines.append(f"N : {k} Delta, psi = 2: Fig. 15 (Delta 50 ms) {a.fmt()} vs Fig. 16 (Delta 500 ms) "
                         f"{b.fmt()}, ratio - 1 = {r.fmt(1, pct=True)}")
    if not sig:
        return no_data("psi = 2 in both Fig. 15 (Delta 50 ms) and Fig. 16 (Delta 500 ms)")
    if all(sig):
        return Verdict("supported", "at psi = 2 the two Delta values differ significantly, by >= 5 %, for every N",
                       tuple(lines))
    if any(sig):
        return Verdict("partly", "a significant >= 5 % difference for some N only", tuple(lines))
    return Verdict("not supported", "no considerable difference at psi = 2", tuple(lines))


CLAIMS = (
    Claim("Fig. 14", "Notice that when 0.3 < ψ < 1, as expected, an improvement in efficiency is seen for larger N.",
          "Supported if, at every grid psi in (0.3, 1), the efficiency is non-decreasing in N and the largest N is "
          "significantly above the smallest (95 % CI of the difference above 0).", _check_14),
    Claim("Fig. 15", "In Fig. 15, a substantial improvement in the throughput is seen as N increases. In addition, "
          "a larger N gives better throughput over a wider range of Δ.",
          "CHOICE: 'substantial' = >= 5 % on average over Delta. Supported if the largest N beats the smallest "
          "significantly at every Delta and by >= 5 % on average.", _check_15),
    Claim("Fig. 15", "The minimum capacity is 50 kB/s, which is 66% of the mean capacity 75 kB/s. Hence, as N "
          "increases, efficiency increases to 0.6.",
          "Supported if the largest efficiency of the largest-N curve lies in [0.55, 0.65] (CHOICE: +/- 0.05); "
          "partly within +/- 0.1.", _check_15_level),
    Claim("Fig. 16", "Similarly, in Fig. 16, for ψ < 8, larger values of N improve the throughput.",
          "Supported if the largest N beats the smallest significantly at every Delta with psi = 1 s / Delta < 8.",
          _check_16),
    Claim("Fig. 16", "When ψ > 10, we see that smaller N performs better, but the improvement is negligible.",
          "CHOICE: 'negligible' = <= 3 %. Supported if at every psi > 10 the smallest N is at least the largest "
          "(point estimates) and they differ by <= 3 %.", _check_16_large),
    Claim("Figs. 15-16", "ψ = 2 in Fig. 15 corresponds to Δ = 50 ms and in Fig. 16 it corresponds to 500 ms). The "
          "considerable throughput difference demonstrates the dependence on the absolute value of Δ.",
          "CHOICE: 'considerable' = >= 5 % and significant. Supported if, for every N, the efficiency at psi = 2 "
          "differs between Delta = 50 ms (tau 100 ms) and Delta = 500 ms (tau 1 s) by >= 5 % with a CI "
          "excluding 0.", _check_absolute),
)

SPEC = FigureSpec(
    key="fig14_16", numbers=(14, 15, 16), title="EFFCAP: the choice of N (Figs. 14-16)",
    parts=parts, draw=draw, claims=CLAIMS,
    settings="Physical units: 500-byte packets, 100 / 50 kB/s, s = 30 ms, buffer 10 packets, EFFCAP M = ceil(Delta "
             "/ s), N = (k - 1) ceil(Delta / s), feedback delayed by Delta, continuous-time capacity chain, "
             "W_max = 128 (CHOICE). Fig. 14: Delta = 200 ms, k = 2, 4, 8 (N = 7, 21, 49), tau 32 ms - 40 s. "
             "Figs. 15 / 16: tau = 100 ms / 1000 ms, Delta 50-500 ms, k = 2, 4, 8, 12 (CHOICE; quick: 2, 12).")
