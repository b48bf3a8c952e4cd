"""The paper's qualitative findings (Sections V-VII), as slow statistical checks.

Each comparison requires the difference of two independent means to exceed 3 standard
errors (replications of 2000 s), i.e. a one-sided test at about the 0.1 % level.
"""

import math

import pytest

from tcpabr_model.sim import Scenario, simulate

pytestmark = pytest.mark.slow


def _eff(psi, feedback, reps=8, **kw):
    r = simulate(Scenario.from_normalized(delta=40, bmax=10, psi=psi, feedback=feedback, **kw), reps, seed=11)
    se = r.efficiency.half_width / 2.365  # t(0.975, 7) for 8 replications
    return r.efficiency.mean, se


def _greater(a, b):
    return a[0] - b[0] > 3 * math.hypot(a[1], b[1])


def test_effcap_beats_instcap_near_psi_one():
    assert _greater(_eff(1.0, "effcap"), _eff(1.0, "instcap"))


def test_instcap_beats_effcap_and_tcp_alone_at_large_psi():
    inst, eff, alone = _eff(50.0, "instcap"), _eff(50.0, "effcap"), _eff(50.0, "none")
    assert _greater(inst, eff)
    assert _greater(inst, alone)


# The two below are the paper's findings that the simulator no longer reproduces since the
# TCP fixes of issue 25 (slow start's loss point, the window cap) made its TCP alone stronger
# (docs/simulator.md, "Against the paper's findings"): strict, so that a change that brings them
# back is seen.
@pytest.mark.xfail(strict=True, reason="INSTCAP / TCP alone at psi 50 is 0.802 / 0.702 = +14 % here "
                                       "(paper: +25-30 %)")
def test_instcap_gains_over_a_seventh_on_tcp_alone_at_large_psi():
    assert _eff(50.0, "instcap")[0] / _eff(50.0, "none")[0] > 1.15


@pytest.mark.parametrize("psi", [0.1, 1.0, pytest.param(10.0, marks=pytest.mark.xfail(
    strict=True, reason="EFFCAP 0.593 +/- 0.003 against TCP alone 0.584 +/- 0.002 at psi 10: not apart by 3 "
                        "standard errors")), 100.0])
def test_effcap_beats_tcp_alone(psi):
    assert _greater(_eff(psi, "effcap"), _eff(psi, "none"))


def test_effcap_two_sessions_fairer_than_tcp_alone():
    def run(feedback):
        kw = dict(m=(8, 12), n=(88, 132)) if feedback == "effcap" else {}
        sc = Scenario(rtt=(0.24, 0.36), tau=0.36, buffer_packets=18, feedback=feedback, **kw)
        return simulate(sc, 6, seed=5)
    e, t = run("effcap"), run("none")
    assert e.fairness.mean > 0.99
    assert e.fairness.low > t.fairness.high
