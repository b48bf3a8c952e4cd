"""Figs. 10-13: EFFCAP (M = 7, N = 49) vs INSTCAP vs TCP alone (simulation).

Seed 004, Section V-B: Delta = 40 time units (200 ms), s = 30 ms, EFFCAP with M : Delta
(M = 7) and N : 8 Delta (N = 49), buffers 8-12 packets (Figs. 10, 11), and a 10-packet
buffer with TCP alone added (Figs. 12, 13).  Figs. 10 and 12 are the large-psi side,
Figs. 11 and 13 the small-psi side.  Efficiency counts TCP/IP headers as throughput and
the ATM overhead as lost capacity (Section V), as the paper's simulations do.
"""

from __future__ import annotations

from ._figure_helpers import DELTA_UNITS, WMAX, fmt_series, no_data, ok, rows, series, sig_neg, sig_pos
from ._report import decisive
from ._spec import Claim, Est, FigureSpec, Part, Verdict

LARGE_MIN = 10.0  # CHOICE: panels of Figs. 10 and 12 show psi >= 10, Figs. 11 and 13 psi <= 5
SMALL_MAX = 5.0


def _grid(size):
    if size.name == "tiny":
        return [1.0, 50.0], [10]
    if size.name == "quick":
        return [0.1, 0.5, 1.0, 2.0, 20.0, 50.0, 100.0], [8, 10, 12]
    return [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0], [8, 9, 10, 11, 12]


def parts(size):
    from ..sweep import Grid

    psis, buffers = _grid(size)
    base = dict(delta=DELTA_UNITS, wmax=WMAX, rate_ratio=0.5, **size.sim_fixed())
    return [
        Part("simulation", Grid({"bmax": buffers, "psi": psis}, fixed=dict(base, feedback="effcap", m=7, n=49)),
             {"scheme": "EFFCAP"}),
        Part("simulation", Grid({"bmax": buffers, "psi": psis}, fixed=dict(base, feedback="instcap")),
             {"scheme": "INSTCAP"}),
        Part("simulation", Grid({"psi": psis}, fixed=dict(base, feedback="none", bmax=10)), {"scheme": "TCP alone"}),
    ]


def draw(df):
    import matplotlib.pyplot as plt

    from ..plot import plot_efficiency_vs_psi

    df = ok(df)
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    big = df[df["psi"] >= LARGE_MIN]
    small = df[df["psi"] <= SMALL_MAX]
    for ax, sub, title in ((axes[0, 0], big, "Fig. 10: EFFCAP vs INSTCAP, large psi"),
                           (axes[0, 1], small, "Fig. 11: EFFCAP vs INSTCAP, small psi")):
        for scheme, ls in (("EFFCAP", "o"), ("INSTCAP", "s")):
            s = rows(sub, scheme=scheme)
            if len(s):
                plot_efficiency_vs_psi(s, by="bmax", ax=ax, label=scheme, markers=ls, ylim=None,
                                       colors=None if scheme == "EFFCAP" else [f"C{i}" for i in range(5, 10)])
        ax.set_title(title, fontsize=10)
    for ax, sub, title in ((axes[1, 0], big, "Fig. 12: buffer 10 packets, large psi"),
                           (axes[1, 1], small, "Fig. 13: buffer 10 packets, small psi")):
        s = rows(sub, bmax=10)
        if len(s):
            plot_efficiency_vs_psi(s, by="scheme", ax=ax, ylim=None)
        ax.set_title(title, fontsize=10)
    for ax in axes.flat:
        ax.set_ylabel("efficiency (IP bytes / mean capacity)")
    fig.suptitle(r"$\Delta$ = 40 time units (200 ms), s = 30 ms, EFFCAP M = 7, N = 49, rate ratio 0.5", fontsize=10)
    fig.tight_layout()
    return fig


def _rel(df, num, den, psi_min=None, psi_max=None, **conds):
    """{(bmax, psi): num / den - 1} over the common points."""
    out = {}
    bmaxes = sorted(set(ok(df)["bmax"].dropna().astype(int))) if "bmax" not in conds else [conds.pop("bmax")]
    for b in bmaxes:
        a = series(df, "psi", scheme=num, bmax=b, **conds)
        c = series(df, "psi", scheme=den, bmax=b, **conds)
        for p in sorted(set(a) & set(c)):
            if (psi_min is None or p >= psi_min) and (psi_max is None or p <= psi_max):
                out[(b, p)] = a[p].rel_to(c[p])
    return out


def _fmt_rel(name, rel):
    return f"{name}: " + "; ".join(f"B={b} psi {p:g}: {r.fmt(1, pct=True)}" for (b, p), r in rel.items())


def _pct_in(x, lo, hi):
    """``x`` in percent, with the digits that show on which side of the nearer bound of [lo, hi] it is."""
    return decisive(x, lo if abs(x - lo) < abs(x - hi) else hi, 1, 100)


def _range_misses(rel, avg, lo, hi, sign):
    """Why a 'partly' of Figs. 10-11: the points on the wrong side of 0 and/or the average outside [lo, hi]."""
    wrong = [k for k, r in rel.items() if not (sign * r.mean > 0)]
    out = []
    if wrong:
        out.append(f"not {'above' if sign > 0 else 'below'} at {len(wrong)} of {len(rel)} (buffer, psi) points ("
                   + ", ".join(f"B={b} psi {p:g}" for b, p in wrong) + ")")
    if not lo <= sign * avg.mean <= hi:
        out.append(f"the average {_pct_in(sign * avg.mean, lo, hi)} % is outside the {100 * lo:g}-{100 * hi:g} % asked")
    return " and ".join(out)


def _check_large(df):
    rel = _rel(df, "EFFCAP", "INSTCAP", psi_min=20.0)
    if not rel:
        return no_data("EFFCAP and INSTCAP at psi >= 20")
    avg = Est.average(rel.values())
    lines = (_fmt_rel("EFFCAP / INSTCAP - 1", rel), f"average {avg.fmt(1, pct=True)}")
    if all(r.mean < 0 for r in rel.values()) and -0.06 <= avg.mean <= -0.02:
        return Verdict("supported", f"EFFCAP is below INSTCAP at every psi >= 20, by {_pct_in(-avg.mean, 0.02, 0.06)} "
                       "% on average (within 2-6 %)", lines)
    if sig_neg(avg):
        return Verdict("partly", f"EFFCAP is significantly below INSTCAP on average, by {-100 * avg.mean:.1f} %, "
                       f"but {_range_misses(rel, avg, 0.02, 0.06, -1)}", lines)
    return Verdict("not supported", f"EFFCAP is not significantly below INSTCAP at large psi (average "
                   f"{avg.fmt(1, pct=True)}, 95 % CI not below 0)", lines)


def _check_small(df):
    rel = _rel(df, "EFFCAP", "INSTCAP", psi_min=0.5, psi_max=2.0)
    if not rel:
        return no_data("EFFCAP and INSTCAP at 0.5 <= psi <= 2")
    avg = Est.average(rel.values())
    lines = (_fmt_rel("EFFCAP / INSTCAP - 1", rel), f"average {avg.fmt(1, pct=True)}")
    if all(r.mean > 0 for r in rel.values()) and 0.08 <= avg.mean <= 0.22:
        return Verdict("supported", f"EFFCAP gains {_pct_in(avg.mean, 0.08, 0.22)} % on average over INSTCAP for psi in "
                       "[0.5, 2] (within 8-22 %), and gains at every point", lines)
    if sig_pos(avg):
        return Verdict("partly", f"EFFCAP gains significantly, {100 * avg.mean:.1f} % on average, but "
                       f"{_range_misses(rel, avg, 0.08, 0.22, 1)}", lines)
    return Verdict("not supported", f"EFFCAP does not gain significantly over INSTCAP near psi = 1 (average "
                   f"{avg.fmt(1, pct=True)}, 95 % CI not above 0)", lines)


def _check_fast(df):
    lines, good = [], []
    for scheme in ("EFFCAP", "INSTCAP"):
        s = series(df, "psi", scheme=scheme, bmax=10)
        fast = [p for p in s if p <= 0.1]
        if not fast or 1.0 not in s:
            continue
        for p in fast:
            d = s[p] - s[1.0]
            good.append(sig_pos(d))
            lines.append(f"{scheme} B=10: efficiency at psi {p:g} {s[p].fmt()} vs psi 1 {s[1.0].fmt()} "
                         f"(difference {d.fmt()})")
    if not good:
        return no_data("psi <= 0.1 and psi = 1 at B = 10")
    if all(good):
        return Verdict("supported", "both schemes are significantly more efficient at psi <= 0.1 than at psi = 1",
                       tuple(lines))
    if any(good):
        return Verdict("partly", f"only {sum(good)} of {len(good)} (scheme, psi <= 0.1) points are significantly above "
                       "the same scheme at psi = 1; the rule asks for every one", tuple(lines))
    return Verdict("not supported", "efficiency at psi <= 0.1 is not above that at psi = 1", tuple(lines))


def _check_fig12(df):
    lines, abr_better, inst_better = [], [], []
    e, i, t = (series(df, "psi", scheme=x, bmax=10) for x in ("EFFCAP", "INSTCAP", "TCP alone"))
    for p in sorted(set(e) & set(i) & set(t)):
        if p < 20.0:
            continue
        abr_better.append(sig_pos(i[p] - t[p]) and sig_pos(e[p] - t[p]))
        inst_better.append(i[p].mean >= e[p].mean)
        lines.append(f"psi {p:g}: INSTCAP {i[p].fmt()}, EFFCAP {e[p].fmt()}, TCP alone {t[p].fmt()}; "
                     f"INSTCAP / TCP alone - 1 = {i[p].rel_to(t[p]).fmt(1, pct=True)}")
    if not lines:
        return no_data("the three schemes at psi >= 20, B = 10")
    if all(abr_better) and all(inst_better):
        return Verdict("supported", "at every psi >= 20 both ABR schemes beat TCP alone significantly and INSTCAP "
                       "is at least EFFCAP", tuple(lines))
    n = len(abr_better)
    if all(abr_better):
        return Verdict("partly", f"ABR beats TCP alone significantly at every psi >= 20, but INSTCAP is at least EFFCAP "
                       f"at only {sum(inst_better)} of {n} of them", tuple(lines))
    return Verdict("not supported", f"both ABR schemes beat TCP alone significantly at only {sum(abr_better)} of {n} "
                   "psi >= 20; the rule asks for every one", tuple(lines))


def _check_fig13(df):
    i, t = (series(df, "psi", scheme=x, bmax=10) for x in ("INSTCAP", "TCP alone"))
    pts = [p for p in sorted(set(i) & set(t)) if 0.5 <= p <= 2.0]
    if not pts:
        return no_data("INSTCAP and TCP alone at 0.5 <= psi <= 2, B = 10")
    d = {p: t[p] - i[p] for p in pts}
    lines = tuple(f"psi {p:g}: TCP alone {t[p].fmt()} vs INSTCAP {i[p].fmt()} (difference {d[p].fmt()})" for p in pts)
    if all(sig_pos(x) for x in d.values()):
        return Verdict("supported", "TCP alone is significantly above INSTCAP at every psi in [0.5, 2]", lines)
    if any(x.mean > 0 for x in d.values()):
        n_sig = sum(sig_pos(x) for x in d.values())
        return Verdict("partly", f"TCP alone is above INSTCAP at {sum(x.mean > 0 for x in d.values())} of {len(d)} psi "
                       f"in [0.5, 2], significantly at {n_sig}; the rule asks for significance at every one", lines)
    return Verdict("not supported", "TCP alone is not above INSTCAP for psi in [0.5, 2]", lines)


def _check_effcap_vs_tcp(df):
    e, t = (series(df, "psi", scheme=x, bmax=10) for x in ("EFFCAP", "TCP alone"))
    pts = sorted(set(e) & set(t))
    if not pts:
        return no_data("EFFCAP and TCP alone at B = 10")
    d = {p: e[p].rel_to(t[p]) for p in pts}
    lines = (fmt_series("EFFCAP / TCP alone - 1", d, pct=True),)
    mid = [p for p in pts if 0.5 <= p <= 2.0]
    k = sum(sig_pos(x) for x in d.values())
    frac = k / len(d)
    count = f"{k} of {len(d)} psi values ({100 * frac:.0f} %"
    count += ", at least the 80 % asked)" if frac >= 0.8 else ", below the 80 % asked)"
    miss = [p for p in mid if not sig_pos(d[p])]
    if not mid:
        mid_txt = ", but the grid has no psi in [0.5, 2], where the rule asks for a significant gain at every psi"
    elif miss:
        mid_txt = (", but not at every psi in [0.5, 2] as the rule asks: not significantly above at "
                   + "; ".join(f"psi {p:g} ({d[p].fmt(1, pct=True)}, 95 % CI "
                               f"{'includes 0' if d[p].hi >= 0 else 'below 0'})" for p in miss))
    else:
        mid_txt = f", and at every psi in [0.5, 2] ({len(mid)} of {len(mid)})"
    if mid and not miss and frac >= 0.8:
        return Verdict("supported", f"EFFCAP beats TCP alone significantly at {count}{mid_txt}", lines)
    if frac > 0:
        return Verdict("partly", f"EFFCAP beats TCP alone significantly at {count}{mid_txt}", lines)
    return Verdict("not supported", f"EFFCAP never beats TCP alone significantly (0 of {len(d)} psi values)", lines)


CLAIMS = (
    Claim("Fig. 10", "We can see from Fig. 10 that for large ψ, the throughput with EFFCAP is worse than that with "
          "the INSTCAP scheme by about 3%–4%.",
          "CHOICE: 'large' = psi >= 20, 'about 3-4 %' = 2-6 %. Supported if EFFCAP / INSTCAP - 1 < 0 at every "
          "(buffer, psi >= 20) and its average lies in [-6 %, -2 %]; partly if the average is significantly "
          "negative but outside.", _check_large),
    Claim("Fig. 11", "However, we can see from Fig. 11 that for small ψ, the EFFCAP algorithm improves over the "
          "INSTCAP approach by 10%–20%. ... When ψ is close to 1, ...",
          "CHOICE: 'small, close to 1' = 0.5 <= psi <= 2, 'about 10-20 %' = 8-22 %. Supported if EFFCAP gains at "
          "every (buffer, psi) there and the average gain lies in [8 %, 22 %]; partly if the average is "
          "significantly positive but outside.", _check_small),
    Claim("Fig. 11 (Section VI)", "when τ is a small fraction of Δ (ψ < 0.2) ... the source essentially transmits "
          "at the mean capacity in EFFCAP as well as INSTCAP feedback. Hence, a high throughput for both types of "
          "feedback is seen from Fig. 11.",
          "CHOICE: 'high' = significantly above the same scheme's efficiency at psi = 1 (B = 10), at every "
          "psi <= 0.1 of the grid.", _check_fast),
    Claim("Fig. 12", "We can see that for φ > 20 (Fig. 12) the throughput of TCP improves if ABR is employed for "
          "link level data transport, and the INSTCAP feedback is slightly better.",
          "At every psi >= 20 (B = 10): INSTCAP and EFFCAP significantly above TCP alone, and INSTCAP >= EFFCAP "
          "(point estimates).", _check_fig12),
    Claim("Fig. 13", "When Δ is comparable to the time for which the link stays in each state (Fig. 13), then TCP "
          "performs better than TCP/ABR with INSTCAP feedback.",
          "CHOICE: 'comparable' = 0.5 <= psi <= 2. Supported if TCP alone is significantly above INSTCAP (B = 10) "
          "at every such psi.", _check_fig13),
    Claim("Fig. 13", "On the other hand, EFFCAP feedback is able to keep the throughput better than that of TCP even "
          "in this regime. ... EFFCAP feedback adapts to ψ, and performs better than TCP alone over a wide range "
          "of ψ.",
          "Supported if EFFCAP is significantly above TCP alone (B = 10) at every psi in [0.5, 2] and at >= 80 % "
          "of all psi values.", _check_effcap_vs_tcp),
)

SPEC = FigureSpec(
    key="fig10_13", numbers=(10, 11, 12, 13), title="EFFCAP vs INSTCAP vs TCP alone (Figs. 10-13)",
    parts=parts, draw=draw, claims=CLAIMS,
    settings="Delta = 40 time units (200 ms), s = 30 ms (feedback delayed by Delta), EFFCAP M = 7, N = 49, "
             "buffers 8-12 packets (INSTCAP and EFFCAP), TCP alone at 10 packets, W_max = 128 (CHOICE), "
             "continuous-time capacity chain, rate ratio 0.5. Large-psi panels psi >= 10, small-psi panels "
             "psi <= 5 (CHOICE).")
