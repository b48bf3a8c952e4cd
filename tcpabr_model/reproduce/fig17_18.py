"""Figs. 17 and 18: the choice of M for EFFCAP (Section VI-A-2), physical units.

Seed 004: M varied from 1 to 10 measurement intervals (s = 30 ms), Delta = 50, 100 and
200 ms, N : 2 Delta (top graphs) and N : 12 Delta (bottom graphs), tau = 1000 ms (Fig. 17,
psi 5-20) and tau = 100 ms (Fig. 18, psi 0.5-2); buffer 10 packets, 100 / 50 kB/s.
CHOICE: ``N : k Delta`` keeps its Section VI-A meaning, (k - 1) ceil(Delta / s) averages,
whatever M is (the paper varies M alone).
"""

from __future__ import annotations

from ._figure_helpers import S, WMAX, ceil_div, n_of_k, no_data, ok, rows, series, sig_pos
from ._report import decisive
from ._spec import Claim, Est, FigureSpec, Part, Verdict

DELTAS = (0.05, 0.1, 0.2)
KS = (2, 12)
TAUS = {"17": 1.0, "18": 0.1}


def _sizes(size):
    if size.name == "tiny":
        return [1, 10], (0.05,)
    if size.name == "quick":
        return [1, 2, 4, 7, 10], DELTAS
    return list(range(1, 11)), DELTAS


def parts(size):
    from ..sweep import Grid

    ms, deltas = _sizes(size)
    out = []
    for fig, tau in TAUS.items():
        for d in deltas:
            for k in KS:
                pts = [dict(feedback="effcap", rtt=d, tau=tau, buffer_packets=10, interval=S, m=m, n=n_of_k(k, d),
                            tcp_wmax=WMAX, **size.sim_fixed()) for m in ms]
                out.append(Part("simulation", Grid.from_points(pts), {"figure": fig, "k": k, "delta_ms": int(1000 * d)}))
    return out


def draw(df):
    import matplotlib.pyplot as plt

    df = ok(df)
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharex=True)
    for j, f in enumerate(("17", "18")):
        for i, k in enumerate(KS):
            ax = axes[i, j]
            for c, d in enumerate(DELTAS):
                s = rows(df, figure=f, k=k, delta_ms=int(1000 * d)).sort_values("m")
                if len(s):
                    ax.errorbar(s["m"], s["efficiency"], yerr=s["efficiency_hw"].fillna(0), fmt="osD"[c], ls="-",
                                capsize=2, ms=4, color=f"C{c}",
                                label=f"Delta {1000 * d:g} ms (psi {TAUS[f] / d:g}, M : Delta = {ceil_div(d)})")
            ax.set_title(f"Fig. {f}: tau = {1000 * TAUS[f]:g} ms, N : {k} Delta", fontsize=10)
            ax.set_xlabel("M (measurement intervals of s = 30 ms per block average)")
            ax.set_ylabel("efficiency (IP bytes / mean capacity)")
            ax.grid(True, alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
    fig.suptitle("EFFCAP: efficiency vs M, buffer 10 packets, 100 / 50 kB/s", fontsize=10)
    fig.tight_layout()
    return fig


def _m(df, fig, k, d):
    return series(df, "m", figure=fig, k=k, delta_ms=int(1000 * d))


def _check_17_slow(df):
    lines, ok_, rels = [], [], []
    for k in KS:
        s = _m(df, "17", k, 0.05)
        if len(s) < 2:
            continue
        lo, hi = min(s), max(s)
        r = s[hi].rel_to(s[lo])
        ok_.append((sig_pos(s[lo] - s[hi]), r.mean >= -0.15))
        rels.append(r.mean)
        lines.append(f"N : {k} Delta, Delta 50 ms (psi 20): M = {lo:g} {s[lo].fmt()}, M = {hi:g} {s[hi].fmt()}, "
                     f"ratio - 1 = {r.fmt(1, pct=True)}")
    if not ok_:
        return no_data("Fig. 17 at Delta = 50 ms")
    each = "; ".join(f"N : {k} Delta: {'significant' if a else 'no significant'} decrease, "
                     f"{decisive(r, -0.15, 1, 100, sign=True)} % ({'within' if b else 'beyond'} 15 %)"
                     for k, (a, b), r in zip(KS, ok_, rels))
    if all(a and b for a, b in ok_):
        return Verdict("supported", "efficiency falls significantly, and by at most 15 %, from the smallest to the "
                       f"largest M, for both N ({each})", tuple(lines))
    if any(a for a, _ in ok_):
        return Verdict("partly", f"a significant decrease by at most 15 % is not found for both N ({each})",
                       tuple(lines))
    return Verdict("not supported", f"no significant decrease with M at Delta = 50 ms ({each})", tuple(lines))


def _check_n(fig):
    def check(df):
        lines, gains = [], {}
        for d in DELTAS:
            a, b = _m(df, fig, KS[1], d), _m(df, fig, KS[0], d)
            common = sorted(set(a) & set(b))
            if not common:
                continue
            g = Est.average([a[m] - b[m] for m in common])
            gains[d] = g
            lines.append(f"Delta {1000 * d:g} ms: mean over M of eff(N : 12 Delta) - eff(N : 2 Delta) = {g.fmt()}")
        if not gains:
            return no_data(f"Fig. {fig} with both N")
        sig = [sig_pos(g) for g in gains.values()]
        n = len(gains)

        def which(sel):
            return ", ".join(f"{1000 * d:g} ms: {g.fmt()}" for d, g in gains.items() if sel(g))

        up, down = sum(sig), sum(g.hi < 0 for g in gains.values())
        flat = n - up - down
        split = (f"N : 12 Delta is significantly better at {up} of {n} Delta values"
                 + (f" ({which(sig_pos)})" if up else "")
                 + (f", significantly WORSE at {down} ({which(lambda g: g.hi < 0)})" if down else "")
                 + (f", not significantly different at {flat} ({which(lambda g: g.lo <= 0 <= g.hi)})" if flat else ""))
        if all(sig):
            return Verdict("supported", "N : 12 Delta is significantly above N : 2 Delta (averaged over M) at every "
                           f"Delta ({up} of {n})", tuple(lines))
        if any(sig):
            return Verdict("partly", f"{split}; the rule asks for a significant gain at every Delta, and 'partly' "
                           "here = a significant gain at one Delta or more, judged per Delta whatever the others show "
                           "(not a criterion on the average over Delta)", tuple(lines))
        return Verdict("not supported", f"a larger N does not improve the efficiency significantly at any Delta: "
                       f"{split}", tuple(lines))
    return check


def _spread(s):
    vals = [v.mean for v in s.values()]
    return (max(vals) - min(vals)) / (sum(vals) / len(vals))


def _check_18_insensitive(df):
    lines, flat, spreads = [], [], []
    for d in DELTAS:
        s = _m(df, "18", 2, d)
        if len(s) < 2:
            continue
        sp = _spread(s)
        flat.append(sp <= 0.05)
        spreads.append((d, sp, sp <= 0.05))
        lines.append(f"N : 2 Delta, Delta {1000 * d:g} ms: efficiency over M from {min(v.mean for v in s.values()):.3f} "
                     f"to {max(v.mean for v in s.values()):.3f} (spread {100 * sp:.1f} % of the mean; largest "
                     f"half-width {max(v.hw for v in s.values()):.3f})")
    if not flat:
        return no_data("Fig. 18 with N : 2 Delta")
    each = "; ".join(f"{1000 * d:g} ms: {decisive(sp, 0.05, 1, 100)} % ({'<=' if f else '>'} 5 %)"
                     for d, sp, f in spreads)
    if all(flat):
        return Verdict("supported", f"for every Delta the efficiency varies by <= 5 % across M (spread {each})",
                       tuple(lines))
    if any(flat):
        return Verdict("partly", f"insensitive to M (spread <= 5 % of the mean) at {sum(flat)} of {len(flat)} Delta "
                       f"values only (spread {each})", tuple(lines))
    return Verdict("not supported", f"the efficiency varies by more than 5 % across M for every Delta (spread {each})",
                   tuple(lines))


def _drop_txt(d, r):
    """How the largest M compares with M = 1 at one Delta of Fig. 18 (N : 12 Delta), against 5-20 % lower."""
    x = f"{r.fmt(1, pct=True)}"
    if r.mean > 0:
        return (f"Delta {1000 * d:g} ms: the efficiency RISES with M ({x}{', significantly' if r.lo > 0 else ''}), "
                "the reverse of the 5-20 % decrease the rule asks")
    if r.mean > -0.05:
        return f"Delta {1000 * d:g} ms: falls by only {decisive(-r.mean, 0.05, 1, 100)} % ({x}), less than 5 %"
    if r.mean < -0.20:
        return f"Delta {1000 * d:g} ms: falls by {decisive(-r.mean, 0.20, 1, 100)} % ({x}), more than 20 %"
    return f"Delta {1000 * d:g} ms: falls by {-100 * r.mean:.1f} % ({x}), within 5-20 %"


def _check_18_n12(df):
    lines, res, txt = [], [], []
    s = _m(df, "18", 12, 0.2)
    if len(s) >= 2:
        sp = _spread(s)
        res.append(sp <= 0.05)
        lines.append(f"N : 12 Delta, Delta 200 ms (psi 0.5): spread over M {100 * sp:.1f} % of the mean")
        txt.append((sp <= 0.05, f"Delta 200 ms: spread over M {decisive(sp, 0.05, 1, 100)} % "
                    f"({'<=' if sp <= 0.05 else '>'} 5 %, {'flat' if sp <= 0.05 else 'not flat'})"))
    for d in (0.1, 0.05):
        s = _m(df, "18", 12, d)
        if len(s) < 2:
            continue
        lo, hi = min(s), max(s)
        r = s[hi].rel_to(s[lo])
        res.append(-0.20 <= r.mean <= -0.05)
        txt.append((res[-1], _drop_txt(d, r)))
        lines.append(f"N : 12 Delta, Delta {1000 * d:g} ms (psi {0.1 / d:g}): M = {hi:g} vs M = {lo:g}, ratio - 1 = "
                     f"{r.fmt(1, pct=True)}")
    if not res:
        return no_data("Fig. 18 with N : 12 Delta")
    good = "; ".join(t for g, t in txt if g) or "none"
    bad = "; ".join(t for g, t in txt if not g)
    if all(res):
        return Verdict("supported", f"flat in M at psi 0.5 (<= 5 %) and a 5-20 % drop at large M for psi 1 and 2 "
                       f"({good})", tuple(lines))
    if any(res):
        return Verdict("partly", f"{sum(res)} of {len(res)} Delta values behave as stated ({good}); the others do not "
                       f"({bad})", tuple(lines))
    return Verdict("not supported", f"none of the {len(res)} Delta values behaves as stated ({bad})", tuple(lines))


def _check_rule(df):
    lines, good, misses = [], [], []
    for f in TAUS:
        for k in KS:
            for d in DELTAS:
                s = _m(df, f, k, d)
                m0 = float(ceil_div(d))
                if m0 not in s or len(s) < 2:
                    continue
                best = max(s, key=lambda m: s[m].mean)
                r = s[m0].rel_to(s[best])
                good.append(r.mean >= -0.05)
                if not good[-1]:
                    misses.append((f"Fig. {f}, N : {k} Delta, Delta {1000 * d:g} ms", r.mean))
                lines.append(f"Fig. {f}, N : {k} Delta, Delta {1000 * d:g} ms: M : Delta = {m0:g} gives {s[m0].fmt()}, "
                             f"best M = {best:g} gives {s[best].fmt()} ({r.fmt(1, pct=True)})")
    if not good:
        return no_data("M : Delta in Figs. 17-18")
    frac = sum(good) / len(good)
    count = f"{sum(good)} of {len(good)} cases ({100 * frac:.0f} %)"
    miss = "; ".join(f"{c} ({decisive(r, -0.05, 1, 100, sign=True)} %)" for c, r in misses)
    if frac == 1:
        return Verdict("supported", f"M : Delta is within 5 % of the best M in every case ({count})", tuple(lines))
    if frac >= 0.5:
        return Verdict("partly", f"M : Delta is within 5 % of the best M in {count}, not every case as the rule "
                       f"asks ('partly' = at least 50 %); more than 5 % below the best in {miss}", tuple(lines))
    return Verdict("not supported", f"M : Delta is within 5 % of the best M in only {count}, below the 50 % of "
                   f"'partly'; more than 5 % below the best in {miss}", tuple(lines))


CLAIMS = (
    Claim("Fig. 17", "With small M, the minimum value can be tracked better. This is seen from Fig. 17 for Δ = 50 ms "
          "(ψ = 20); the throughput decreases slowly with increasing M.",
          "CHOICE: 'slowly' = by at most 15 % from M = 1 to M = 10. Supported if, for both N, the efficiency at the "
          "largest M is significantly below that at the smallest M, by at most 15 %.", _check_17_slow),
    Claim("Fig. 17", "Notice from Fig. 17 that a larger value of N improves efficiency, as more samples implies a "
          "better chance of picking up the minimum rate.",
          "Supported if the mean over M of eff(N : 12 Delta) - eff(N : 2 Delta) is significantly positive at every "
          "Delta (tau = 1 s).", _check_n("17")),
    Claim("Fig. 18", "In Fig. 18, for N : 2Δ, the throughput is insensitive to the variation in M.",
          "CHOICE: 'insensitive' = spread (max - min over M) <= 5 % of the mean. Supported if so at every Delta.",
          _check_18_insensitive),
    Claim("Fig. 18", "Again increasing N improves throughput.",
          "As for Fig. 17, at tau = 100 ms.", _check_n("18")),
    Claim("Fig. 18", "Insensitivity to M is observed in the case of N : 12Δ for ψ = 0.5, but for larger ψ, 1 or 2, "
          "i.e., Δ = 100 or 50 ms, a 10%–15% decrease in the throughput is seen for larger values of M.",
          "CHOICE: 'about 10-15 %' = 5-20 %. Supported if the spread over M is <= 5 % at Delta = 200 ms and the "
          "largest M is 5-20 % below M = 1 at Delta = 100 and 50 ms (N : 12 Delta).", _check_18_n12),
    Claim("Figs. 17-18", "We notice that, as a rule of thumb, M : Δ gives good performance in each case.",
          "CHOICE: 'good' = within 5 % of the best M of the same curve. Supported if so for every (tau, N, Delta).",
          _check_rule),
)

SPEC = FigureSpec(
    key="fig17_18", numbers=(17, 18), title="EFFCAP: the choice of M (Figs. 17-18)",
    parts=parts, draw=draw, claims=CLAIMS,
    settings="Physical units: 500-byte packets, 100 / 50 kB/s, s = 30 ms, buffer 10 packets, Delta = 50, 100, "
             "200 ms, M = 1..10 (quick: 1, 2, 4, 7, 10), N = (k - 1) ceil(Delta / s) for k = 2 and 12 (CHOICE: "
             "independent of M), tau = 1000 ms (Fig. 17) and 100 ms (Fig. 18), feedback delayed by Delta, "
             "W_max = 128 (CHOICE).")
