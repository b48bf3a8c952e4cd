"""ERICA / ERICA+ at a port: hand-computed ER for given loads and queues, each ERICA+ feature."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from tcpabr_model.sim.switch import erica as E
from tcpabr_model.sim.switch.erica import EricaParams, queue_control_fraction

LINK = 100.0   # cells per time unit


def _port(n_vc=4, **kw):
    base = dict(interval_cells=10**6, interval_seconds=1.0, queue_control=False,
                target_utilization=0.9, average_sources=False, average_overload=False,
                max_alloc_previous=False)
    base.update(kw)
    par = EricaParams(**base).to_array(1.0, LINK)
    es = np.zeros(E.ES_NSTATE)
    act = np.zeros(n_vc)
    ccr = np.zeros(n_vc)
    E.erica_init(par, es, act, ccr, 0.0)
    return par, es, act, ccr


def _interval(par, es, act, cells_per_vc, vbr, t_end, queue=0):
    for vc, n in enumerate(cells_per_vc):
        for _ in range(n):
            E.erica_on_abr_input(par, es, act, vc)
    for _ in range(vbr):
        E.erica_on_vbr_served(es)
    assert E.erica_end_interval(par, es, act, t_end, queue)


def test_erica_hand_computed_overload():
    par, es, act, ccr = _port()
    for vc, c in enumerate((50.0, 10.0, 100.0)):
        E.erica_on_frm(ccr, vc, c)
    _interval(par, es, act, (30, 30, 30, 0), vbr=20, t_end=1.0)
    # C_abr = 100 - 20 = 80, target = 0.9 * 80 = 72, input rate 90 -> z = 1.25
    assert es[E.ES_CABR] == pytest.approx(80.0)
    assert es[E.ES_TARGET] == pytest.approx(72.0)
    assert es[E.ES_Z] == pytest.approx(1.25)
    assert es[E.ES_NACT] == 3 and es[E.ES_FAIR] == pytest.approx(24.0)
    assert E.erica_feedback(par, es, ccr, 0, 1e9) == pytest.approx(40.0)   # VCShare 50/1.25
    assert E.erica_feedback(par, es, ccr, 1, 1e9) == pytest.approx(24.0)   # fair share wins
    assert E.erica_feedback(par, es, ccr, 2, 1e9) == pytest.approx(72.0)   # 80 capped at target
    assert E.erica_feedback(par, es, ccr, 0, 30.0) == 30.0                 # lower ER kept


def test_erica_underload_and_max_alloc_previous():
    # the MaxAllocPrevious term alone (the "avoid sudden increase" limit off; see below)
    par, es, act, ccr = _port(max_alloc_previous=True, delta=0.1, limit_low_ccr=False)
    E.erica_on_frm(ccr, 0, 100.0)
    E.erica_on_frm(ccr, 1, 10.0)
    _interval(par, es, act, (60, 30), vbr=0, t_end=1.0)      # target 90, z = 1.0: underload band
    assert es[E.ES_Z] == pytest.approx(1.0)
    assert E.erica_feedback(par, es, ccr, 0, 1e9) == pytest.approx(90.0)   # 100 capped at 90
    assert es[E.ES_MACUR] == pytest.approx(90.0)
    _interval(par, es, act, (20, 25), vbr=0, t_end=2.0)      # z = 0.5, fair = 45
    assert es[E.ES_MAPREV] == pytest.approx(90.0)
    # VC1: VCShare 20, fair 45, but MaxAllocPrevious 90 in underload
    assert E.erica_feedback(par, es, ccr, 1, 1e9) == pytest.approx(90.0)
    par2, es2, act2, ccr2 = _port(max_alloc_previous=True, delta=0.1)
    E.erica_on_frm(ccr2, 0, 100.0)
    E.erica_on_frm(ccr2, 1, 10.0)
    _interval(par2, es2, act2, (60, 30), vbr=0, t_end=1.0)
    E.erica_feedback(par2, es2, ccr2, 0, 1e9)
    _interval(par2, es2, act2, (150, 50), vbr=0, t_end=2.0)  # z = 200/90 > 1.1: overload
    assert E.erica_feedback(par2, es2, ccr2, 1, 1e9) == pytest.approx(45.0)


def test_vc_below_fair_share_is_raised_to_the_fair_share_only():
    # ERICA's "avoid sudden increase" step (98-0408 node 4, eq. 12): ER > FairShare and
    # CCR < FairShare -> ER = FairShare.  Same intervals as the test above.
    par, es, act, ccr = _port(max_alloc_previous=True, delta=0.1)     # limit_low_ccr default on
    E.erica_on_frm(ccr, 0, 100.0)
    E.erica_on_frm(ccr, 1, 10.0)
    _interval(par, es, act, (60, 30), vbr=0, t_end=1.0)
    assert E.erica_feedback(par, es, ccr, 0, 1e9) == pytest.approx(90.0)
    _interval(par, es, act, (20, 25), vbr=0, t_end=2.0)      # z = 0.5, fair = 45, MaxAllocPrev 90
    assert E.erica_feedback(par, es, ccr, 1, 1e9) == pytest.approx(45.0)   # CCR 10 < 45: fair share
    assert es[E.ES_MACUR] == pytest.approx(90.0)             # the unlimited ER is what MaxAlloc records
    assert E.erica_feedback(par, es, ccr, 0, 1e9) == pytest.approx(90.0)   # CCR 100 >= 45: unchanged
    # a large VCShare of a slow VC (CCR 10, z = 0.1 -> 100) is limited the same way
    par, es, act, ccr = _port(max_alloc_previous=False)
    E.erica_on_frm(ccr, 0, 10.0)
    _interval(par, es, act, (9, 0), vbr=0, t_end=1.0)        # z = 9 / 90 = 0.1, fair = 90 / 1
    assert es[E.ES_FAIR] == pytest.approx(90.0)
    assert E.erica_feedback(par, es, ccr, 0, 1e9) == pytest.approx(90.0)   # VCShare 100 > target 90
    _interval(par, es, act, (9, 9), vbr=0, t_end=2.0)        # two VCs seen: fair = 45, z = 0.2
    assert E.erica_feedback(par, es, ccr, 0, 1e9) == pytest.approx(45.0)   # VCShare 50 -> fair 45
    par_off = EricaParams(interval_cells=10**6, interval_seconds=1.0, queue_control=False,
                          average_sources=False, average_overload=False, max_alloc_previous=False,
                          limit_low_ccr=False).to_array(1.0, LINK)
    assert E.erica_feedback(par_off, es, ccr, 0, 1e9) == pytest.approx(50.0)


def test_erica_plus_queue_control_function_values():
    # f(0) = b, f(T0) = 1, decreasing, floored at QDLF
    assert queue_control_fraction(0.0, 1.0, 1.15, 1.05, 0.5) == pytest.approx(1.05)
    assert queue_control_fraction(0.5, 1.0, 1.15, 1.05, 0.5) == pytest.approx(1.05 / 1.025)
    assert queue_control_fraction(1.0, 1.0, 1.15, 1.05, 0.5) == pytest.approx(1.0)
    assert queue_control_fraction(3.0, 1.0, 1.15, 1.05, 0.5) == pytest.approx(1.15 / 1.45)
    assert queue_control_fraction(100.0, 1.0, 1.15, 1.05, 0.5) == 0.5
    assert queue_control_fraction(np.inf, 1.0, 1.15, 1.05, 0.5) == 0.5


@settings(deadline=None, max_examples=200)
@given(t1=hst.floats(0.0, 1e3), t2=hst.floats(0.0, 1e3), t0=hst.floats(1e-3, 10.0),
       a=hst.floats(1.01, 5.0), b=hst.floats(1.0, 2.0), qdlf=hst.floats(0.01, 1.0))
def test_queue_control_is_monotone_and_bounded(t1, t2, t0, a, b, qdlf):
    lo, hi = min(t1, t2), max(t1, t2)
    f_lo = queue_control_fraction(lo, t0, a, b, qdlf)
    f_hi = queue_control_fraction(hi, t0, a, b, qdlf)
    assert f_hi <= f_lo + 1e-12
    assert min(qdlf, 1.0) - 1e-12 <= f_hi <= b + 1e-12


def test_erica_plus_target_follows_queue_delay():
    # ERICA+ with T0 = 1 time unit; link 100, VBR 20 -> C_abr 80
    par, es, act, ccr = _port(queue_control=True, t0_seconds=1.0, a=1.15, b=1.05, qdlf=0.5)
    _interval(par, es, act, (40,), vbr=20, t_end=1.0, queue=240)    # Tq = 240 / 80 = 3
    assert es[E.ES_TQ] == pytest.approx(3.0)
    assert es[E.ES_FRAC] == pytest.approx(1.15 / 1.45)
    assert es[E.ES_TARGET] == pytest.approx(80.0 * 1.15 / 1.45)
    _interval(par, es, act, (40,), vbr=20, t_end=2.0, queue=0)      # empty queue: 1.05 x 80
    assert es[E.ES_TARGET] == pytest.approx(84.0)
    _interval(par, es, act, (40,), vbr=0, t_end=3.0, queue=0)       # b x 100 > link: capped
    assert es[E.ES_TARGET] == pytest.approx(LINK)


def test_overload_factor_averaging():
    par, es, act, ccr = _port(average_overload=True, overload_weight=0.2)
    _interval(par, es, act, (90,), vbr=28, t_end=1.0)               # target 0.9*72: z = 90/64.8
    z1 = 90 / 64.8
    assert es[E.ES_Z] == pytest.approx(z1)                          # first sample taken as is
    _interval(par, es, act, (45,), vbr=10, t_end=2.0)               # z sample = 45 / 81
    assert es[E.ES_Z] == pytest.approx(0.8 * z1 + 0.2 * 45 / 81)


def test_active_source_averaging():
    par, es, act, ccr = _port(n_vc=3, average_sources=True, source_decay=0.9)
    _interval(par, es, act, (5, 5, 5), vbr=0, t_end=1.0)
    assert es[E.ES_NACT] == pytest.approx(3.0)
    _interval(par, es, act, (5, 0, 0), vbr=0, t_end=2.0)
    assert es[E.ES_NACT] == pytest.approx(1 + 0.9 + 0.9)
    _interval(par, es, act, (5, 0, 0), vbr=0, t_end=3.0)
    assert es[E.ES_NACT] == pytest.approx(1 + 0.81 + 0.81)
    assert es[E.ES_FAIR] == pytest.approx(90.0 / 2.62)
    # without averaging only the VCs seen in the interval count
    par, es, act, ccr = _port(n_vc=3)
    _interval(par, es, act, (5, 5, 5), vbr=0, t_end=1.0)
    _interval(par, es, act, (5, 0, 0), vbr=0, t_end=2.0)
    assert es[E.ES_NACT] == 1.0


def test_boundary_conditions_zero_load_and_no_sources():
    par, es, act, ccr = _port(n_vc=2)
    E.erica_on_frm(ccr, 0, 30.0)
    _interval(par, es, act, (0, 0), vbr=0, t_end=1.0)
    assert es[E.ES_Z] == 0.0 and es[E.ES_NACT] == 1.0 and es[E.ES_FAIR] == pytest.approx(90.0)
    assert E.erica_feedback(par, es, ccr, 0, 1e9) == pytest.approx(90.0)
    # all capacity taken by VBR but ABR load: target 0, ER 0 (sources fall to MCR)
    par, es, act, ccr = _port(n_vc=2, queue_control=True)
    _interval(par, es, act, (10, 0), vbr=100, t_end=1.0, queue=5)
    assert es[E.ES_CABR] == 0.0 and es[E.ES_TARGET] == 0.0 and es[E.ES_Z] > 1e20
    assert E.erica_feedback(par, es, ccr, 0, 1e9) == 0.0


def test_interval_end_by_cells_or_time():
    par, es, act, ccr = _port(interval_cells=100, interval_seconds=5.0)
    due = [E.erica_on_abr_input(par, es, act, 0) for _ in range(100)]
    assert due == [False] * 99 + [True]
    assert not E.erica_time_due(par, es, 4.99) and E.erica_time_due(par, es, 5.0)
    assert not E.erica_end_interval(par, es, act, 0.0, 0)          # zero-length interval ignored
    assert E.erica_end_interval(par, es, act, 2.0, 0)
    assert es[E.ES_INRATE] == pytest.approx(50.0) and es[E.ES_NABR] == 0
    assert es[E.ES_TSTART] == 2.0 and es[E.ES_NINT] == 1


@settings(deadline=None, max_examples=100)
@given(cells=hst.lists(hst.integers(0, 500), min_size=1, max_size=5),
       vbr=hst.integers(0, 150), q=hst.integers(0, 10**5), ccr=hst.floats(0.0, 1e3),
       plus=hst.booleans())
def test_er_never_exceeds_target_or_link(cells, vbr, q, ccr, plus):
    par, es, act, ctab = _port(n_vc=len(cells), queue_control=plus)
    for v in range(len(cells)):
        E.erica_on_frm(ctab, v, ccr)
    _interval(par, es, act, tuple(cells), vbr=vbr, t_end=1.0, queue=q)
    for v in range(len(cells)):
        er = E.erica_feedback(par, es, ctab, v, 1e9)
        assert 0.0 <= er <= min(es[E.ES_TARGET], LINK) + 1e-9


@pytest.mark.parametrize("kw, name", [
    (dict(interval_cells=0), "interval_cells"),
    (dict(interval_seconds=0.0), "interval_seconds"),
    (dict(target_utilization=1.2), "target_utilization"),
    (dict(t0_seconds=-1.0), "t0_seconds"),
    (dict(a=1.0), "a"),
    (dict(b=0.9), "b"),
    (dict(qdlf=0.0), "qdlf"),
    (dict(source_decay=1.0), "source_decay"),
    (dict(overload_weight=0.0), "overload_weight"),
    (dict(delta=-0.1), "delta"),
    (dict(queue_control="yes"), "queue_control"),
    (dict(limit_low_ccr=1), "limit_low_ccr"),
])
def test_bad_parameters_name_themselves(kw, name):
    with pytest.raises(ValueError, match=f"^{name}="):
        EricaParams(**kw)
    with pytest.raises(ValueError, match="^link_rate="):
        EricaParams().to_array(1.0, 0.0)
