"""Verdict REASONS of `tcpabr reproduce` state the numbers and the threshold that decided the
verdict (audit of the quick REPORT.md).  Each check runs on a small synthetic table built so
that its numbers are those of the quick run the audit read; the verdicts themselves are the
ones the documented criteria give (unchanged), only the reason texts are checked here."""

from __future__ import annotations

import pandas as pd
import pytest

from tcpabr_model.reproduce import fig08_09, fig10_13, fig17_18, fig19_22
from tcpabr_model.reproduce._report import decisive, decisive_pair


def _claim(mod, figure, start=""):
    found = [c for c in mod.CLAIMS if c.figure == figure and c.quote.startswith(start)]
    assert len(found) == 1, (figure, start)
    return found[0]


# ---------------------------------------------------------------- the digit helpers
def test_decisive_prints_enough_digits_for_the_comparison():
    assert decisive(0.5033, 0.5, 3) == "0.503"
    assert decisive(0.50004, 0.5, 3) == "0.50004"            # '0.500' would hide '> 0.5'
    assert decisive(0.5, 0.5, 2) == "0.50"
    assert decisive(-0.101, -0.10, 1, 100, sign=True) == "-10.1"
    assert decisive(-0.10004, -0.10, 1, 100, sign=True) == "-10.004"
    assert decisive(0.0499, 0.05, 1, 100) == "4.99"
    assert decisive_pair(0.0334, 0.0331, 1, 100) == ("3.34", "3.31")
    assert decisive_pair(0.033, 0.033, 1, 100) == ("3.3", "3.3")
    assert decisive_pair(0.05, 0.04, 1, 100) == ("5.0", "4.0")


# ---------------------------------------------------------------- item 1: Figs. 21-22, claim 4
def _two_session_table(imbalance: dict) -> pd.DataFrame:
    """{case: {psi: session 1 / session 2 - 1}} -> rows with eff_conn0 / eff_conn1."""
    out = []
    for case, by_psi in imbalance.items():
        for psi, r in by_psi.items():
            out.append(dict(case=case, psi=psi, eff_conn1=0.3, eff_conn1_hw=0.001, eff_conn0=0.3 * (1 + r),
                            eff_conn0_hw=0.001, efficiency=0.6, efficiency_hw=0.001, status="ok"))
    return pd.DataFrame(out)


@pytest.mark.parametrize("case1_at_1, status, expected", [
    (0.003, "partly", ("3 of 4", "75 %", "80 %", "psi 1", "3.7 % in Case 2 vs 5.7 % in Case 1")),
    (0.010, "supported", ("4 of 4", "80 %")),      # supported: the reason says the count too
])
def test_fig21_22_balance_reason_counts_psi_values_against_80_percent(case1_at_1, status, expected):
    df = _two_session_table({
        "EFFCAP case 1": {0.3: -0.024, 1.0: case1_at_1, 3.0: 0.058, 10.0: 0.142},
        "EFFCAP case 2": {0.3: 0.001, 1.0: 0.005, 3.0: 0.048, 10.0: 0.093},
    })
    v = _claim(fig19_22, "Figs. 21-22", "We notice").check(df)
    assert v.status == status
    for s in expected:
        assert s in v.reason, (s, v.reason)


# ---------------------------------------------------------------- item 2: Fig. 13, claim 6
def _effcap_tcp_table(gains: dict) -> pd.DataFrame:
    """{psi: (EFFCAP / TCP alone - 1, its 95 % half-width)} at B = 10, TCP alone exact at 0.5."""
    out = []
    for psi, (r, h) in gains.items():
        out.append(dict(scheme="TCP alone", bmax=10, psi=psi, efficiency=0.5, efficiency_hw=0.0, status="ok"))
        out.append(dict(scheme="EFFCAP", bmax=10, psi=psi, efficiency=0.5 * (1 + r), efficiency_hw=0.5 * h,
                        status="ok"))
    return pd.DataFrame(out)


QUICK_FIG13 = {0.1: (0.138, 0.015), 0.5: (0.082, 0.016), 1.0: (0.045, 0.018), 2.0: (0.002, 0.022),
               20.0: (0.053, 0.051), 50.0: (0.094, 0.035), 100.0: (0.092, 0.022)}


def test_fig13_reason_names_the_failing_condition():
    v = _claim(fig10_13, "Fig. 13", "On the other hand").check(_effcap_tcp_table(QUICK_FIG13))
    assert v.status == "partly"
    for s in ("6 of 7", "86 %", "80 %", "[0.5, 2]", "psi 2", "+0.2 % ± 2.2"):
        assert s in v.reason, (s, v.reason)


def test_fig13_reason_when_the_share_is_below_80_percent():
    gains = {**QUICK_FIG13, 2.0: (0.03, 0.02), 20.0: (0.01, 0.05), 50.0: (0.0, 0.03)}
    v = _claim(fig10_13, "Fig. 13", "On the other hand").check(_effcap_tcp_table(gains))
    assert v.status == "partly"
    assert "5 of 7" in v.reason and "below the 80 %" in v.reason and "every psi in [0.5, 2] (3 of 3)" in v.reason


# ---------------------------------------------------------------- item 3: Fig. 22, claim 6
def _totals_table(rel: dict) -> pd.DataFrame:
    """{case: (total / TCP alone - 1, half-width)} at one psi; TCP alone exact at 0.7."""
    out = [dict(case="TCP alone", psi=1.0, efficiency=0.7, efficiency_hw=0.0, status="ok")]
    for case, (r, h) in rel.items():
        out.append(dict(case=case, psi=1.0, efficiency=0.7 * (1 + r), efficiency_hw=0.7 * h, status="ok"))
    return pd.DataFrame(out)


def test_fig22_reason_states_each_case_against_10_percent():
    df = _totals_table({"EFFCAP case 1": (-0.092, 0.007), "EFFCAP case 2": (-0.101, 0.007)})
    v = _claim(fig19_22, "Fig. 22").check(df)
    assert v.status == "partly"
    r = v.reason
    assert "EFFCAP case 1 -9.2 % ± 0.7 (within the 10 %; its 95 % CI [-9.9 %, -8.5 %] excludes -10 %)" in r, r
    assert "EFFCAP case 2 -10.1 % ± 0.7 (beyond the 10 %; its 95 % CI [-10.8 %, -9.4 %] includes -10 %)" in r, r


def test_fig22_reason_shows_digits_that_decide_and_a_straddling_ci():
    df = _totals_table({"EFFCAP case 1": (-0.0995, 0.007), "EFFCAP case 2": (-0.1003, 0.001)})
    v = _claim(fig19_22, "Fig. 22").check(df)
    assert v.status == "partly"
    assert "EFFCAP case 1 -9.95 % ± 0.7 (within the 10 %; its 95 % CI" in v.reason, v.reason
    assert "EFFCAP case 2 -10.03 % ± 0.1 (beyond the 10 %" in v.reason, v.reason


# ---------------------------------------------------------------- item 4: Figs. 8-9, claim 4
def _buffer_table(instcap: float, tcp: float, tcp_hw: float = 0.017) -> pd.DataFrame:
    """Continuous simulation at one psi: B=12 / B=10 - 1 = ``instcap`` and ``tcp``."""
    out = []
    for fb, g, h in (("instcap", instcap, 0.014), ("none", tcp, tcp_hw)):
        out.append(dict(source="simulation", feedback=fb, mode="continuous", bmax=10, psi=2.0, efficiency=0.5,
                        efficiency_hw=0.0, status="ok"))
        out.append(dict(source="simulation", feedback=fb, mode="continuous", bmax=12, psi=2.0,
                        efficiency=0.5 * (1 + g), efficiency_hw=0.5 * h, status="ok"))
    return pd.DataFrame(out)


@pytest.mark.parametrize("instcap,status,ratio,side", [
    (0.0371, "partly", "0.503", "above the 0.5"),
    (0.0360, "supported", "0.488", "at most the 0.5"),
    (0.03693, "partly", "0.5004", "above the 0.5"),       # 0.500 would not show that it is above
])
def test_fig8_9_buffer_reason_prints_the_deciding_ratio(instcap, status, ratio, side):
    v = _claim(fig08_09, "Figs. 8-9").check(_buffer_table(instcap, 0.0738))
    assert v.status == status
    assert f"{ratio} times TCP alone's" in v.reason and side in v.reason, v.reason
    assert "+7.38 %" in v.reason, v.reason
    assert any(f"= {ratio} (the rule asks at most 0.5)" in n for n in v.numbers), v.numbers


def test_fig8_9_buffer_reason_when_tcp_alone_is_not_significant():
    v = _claim(fig08_09, "Figs. 8-9").check(_buffer_table(0.01, 0.0738, tcp_hw=0.09))
    assert v.status == "partly"
    assert "not significantly > 0 (95 % CI includes 0)" in v.reason and "0.136" in v.reason, v.reason


# ---------------------------------------------------------------- item 5: Figs. 17-18
def _m_table(fig: str, curves: dict) -> pd.DataFrame:
    """{(k, delta_ms): {M: (efficiency, half-width)}} of Fig. ``fig``."""
    out = []
    for (k, d), by_m in curves.items():
        for m, (e, h) in by_m.items():
            out.append(dict(figure=fig, k=k, delta_ms=d, m=m, efficiency=e, efficiency_hw=h, status="ok"))
    return pd.DataFrame(out)


def test_fig18_claim5_reason_says_the_efficiency_rises_with_m():
    df = _m_table("18", {
        (12, 200): {1: (0.575, 0.003), 10: (0.601, 0.005)},
        (12, 100): {1: (0.570, 0.001), 10: (0.570 * 1.074, 0.002)},
        (12, 50): {1: (0.574, 0.003), 10: (0.574 * 1.134, 0.002)},
    })
    v = _claim(fig17_18, "Fig. 18", "Insensitivity").check(df)
    assert v.status == "partly"
    for s in ("1 of 3", "Delta 200 ms: spread over M 4.4 % (<= 5 %", "Delta 100 ms: the efficiency RISES with M (+7.4 %",
              "Delta 50 ms: the efficiency RISES with M (+13.4 %", "reverse of the 5-20 % decrease"):
        assert s in v.reason, (s, v.reason)


def _n_gain_table(fig: str, gains: dict) -> pd.DataFrame:
    """{delta_ms: (eff(N : 12 Delta) - eff(N : 2 Delta), half-width of N : 12 Delta)} at M = 1 and 4."""
    curves = {}
    for d, (g, h) in gains.items():
        curves[(2, d)] = {1: (0.6, 0.0), 4: (0.6, 0.0)}
        curves[(12, d)] = {1: (0.6 + g, h), 4: (0.6 + g, h)}
    return _m_table(fig, curves)


@pytest.mark.parametrize("fig,start", [("17", "Notice from Fig. 17"), ("18", "Again")])
def test_fig17_18_larger_n_reason_counts_both_directions_and_names_its_criterion(fig, start):
    df = _n_gain_table(fig, {50: (-0.096, 0.004), 100: (-0.072, 0.007), 200: (0.031, 0.011)})
    v = _claim(fig17_18, f"Fig. {fig}", start).check(df)
    assert v.status == "partly"
    for s in ("significantly better at 1 of 3 Delta values (200 ms: 0.031", "significantly WORSE at 2 (50 ms: -0.096",
              "100 ms: -0.072", "every Delta", "per Delta", "not a criterion on the average"):
        assert s in v.reason, (s, v.reason)


def test_fig17_larger_n_not_supported_when_no_delta_gains():
    df = _n_gain_table("17", {50: (-0.096, 0.004), 100: (0.001, 0.007), 200: (-0.03, 0.011)})
    v = _claim(fig17_18, "Fig. 17", "Notice from Fig. 17").check(df)
    assert v.status == "not supported"
    assert "better at 0 of 3" in v.reason and "WORSE at 2" in v.reason and "not significantly different at 1" in v.reason
