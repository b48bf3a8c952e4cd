"""Source rules + ERICA+ in closed loop on one port (greedy sources, the test driver)."""

import numpy as np
import pytest

from tcpabr_model.sim.abr import greedy_loop as L
from tcpabr_model.sim.switch import erica as E
from tcpabr_model.sim.abr.divergence import queue_divergence
from tcpabr_model.sim.switch.erica import EricaParams
from tcpabr_model.sim.presets.abr_backbone import slides_source_params

LINK = 155.52e6 / 424          # cells/s
SLOT = 1.0 / LINK
BASIC = EricaParams(average_sources=False, average_overload=False)   # T0 = 0.5 ms


def _run(secs, n=15, d=5e-3, vbr=0.0, duty=0.8, period=10e-3, erica=BASIC, stop=None, every=100):
    spar = slides_source_params().to_array(SLOT)
    epar = erica.to_array(SLOT, 1.0)
    ns = int(secs / SLOT)
    d1 = int(round(d / SLOT))
    q = np.zeros(ns // every + 1)
    a = np.zeros(ns // every + 1)
    out = np.zeros(L.LO_NOUT, dtype=np.int64)
    on = int(round(duty * period / SLOT))
    L.abr_loop(ns, ns if stop is None else int(stop / SLOT), d1, 2 * d1, vbr, on,
               int(round(period / SLOT)) - on, spar, epar, n, every, 1 << 20, q, a, out,
               np.zeros((0, L.IL_N)), np.zeros((0, L.BL_N)), np.zeros(2, dtype=np.int64))
    assert out[L.LO_ERR] == 0
    return out, q, a, np.arange(q.size) * every * SLOT


def test_switch_queue_converges_without_vbr():
    out, q, acr, t = _run(1.0)
    second = q[q.size // 2:]
    target = 0.5e-3 * LINK                       # ERICA+ target: T0 x ABR capacity, 183 cells
    assert 0.5 * target <= second.mean() <= 2.0 * target
    assert second.max() < 5 * target
    # the link is used: ABR cells served over the second half / link cells
    assert out[L.LO_ABR_SERVED_2H] / (0.5 * LINK) > 0.97
    assert not queue_divergence(t, q, LINK).diverges
    # the sources' allowed rates add up to about the link rate (f(Tq) ~ 1 at Tq ~ T0)
    assert 0.9 <= acr[-1] <= 1.06


def test_every_frm_is_turned_around_and_returns():
    out, q, _, _ = _run(1.0, stop=0.8)          # sources stop at 0.8 s; the loop drains
    assert q[-1] == 0
    assert out[L.LO_FRM_SENT] == out[L.LO_FRM_TURNED] == out[L.LO_BRM_RECV] > 0
    # SES-3: one FRM per Nrm = 32 in-rate cells (per source, +1 for the first FRM, and the
    # Trm rule can only add FRMs)
    total = out[L.LO_FRM_SENT] + out[L.LO_DATA_SENT]
    assert out[L.LO_FRM_SENT] >= total // 32
    assert out[L.LO_FRM_SENT] <= total // 32 + 15 + 15 * int(0.8 / 0.1)


@pytest.mark.parametrize("duty, period, diverges", [(0.8, 10e-3, True), (0.8, 1e-3, False)])
def test_medium_on_off_period_makes_the_queue_diverge(duty, period, diverges):
    # the slides' VBR table, rows 5 and 8, with greedy sources in place of TCP
    out, q, _, t = _run(2.0, vbr=0.8, duty=duty, period=period)
    assert queue_divergence(t, q, LINK).diverges is diverges


def test_short_feedback_delay_keeps_the_queue_bounded():
    # the slides' feedback-delay table, row 1: d = 0.8, p = 10 ms, feedback delay 1 ms
    # (d1 = 0.5 ms here: switch -> source -> switch 1 ms, RTT 3 ms) is bounded; row 3
    # (10 ms) diverges: test_medium_on_off_period_makes_the_queue_diverge, first case
    out, q, _, t = _run(2.0, d=0.5e-3, vbr=0.8, duty=0.8, period=10e-3)
    assert not queue_divergence(t, q, LINK).diverges
    assert q[q.size // 2:].mean() < 2000          # measured 901 cells (max 5093)
    assert out[L.LO_ABR_SERVED_2H] / LINK > 0.35   # ABR gets the 36 % VBR leaves (1 s half)


def test_without_the_low_ccr_limit_the_short_delay_case_diverges():
    # sensitivity (docs/abr_erica.md, "Findings"): without ERICA's "avoid sudden increase"
    # step every VC passing during a VBR off time is raised to MaxAllocPrevious and keeps
    # that rate until its next BRM (~3.6 ms later) -- well into the next on time
    er = EricaParams(average_sources=False, average_overload=False, limit_low_ccr=False)
    out, q, _, t = _run(2.0, d=0.5e-3, vbr=0.8, duty=0.8, period=10e-3, erica=er)
    assert queue_divergence(t, q, LINK).diverges



def test_trace_rows_are_consistent():
    spar = slides_source_params().to_array(SLOT)
    epar = BASIC.to_array(SLOT, 1.0)
    ns = int(0.1 / SLOT)
    q, a = np.zeros(ns // 100 + 1), np.zeros(ns // 100 + 1)
    out = np.zeros(L.LO_NOUT, dtype=np.int64)
    ilog, blog = np.zeros((5000, L.IL_N)), np.zeros((5000, L.BL_N))
    nlog = np.zeros(2, dtype=np.int64)
    L.abr_loop(ns, ns, 1834, 3668, 0.8, 2934, 734, spar, epar, 15, 100, 1 << 20, q, a, out,
               ilog, blog, nlog)
    il, bl = ilog[:nlog[0]], blog[:nlog[1]]
    assert 0 < len(il) < 5000 and 0 < len(bl) < 5000
    tmax = epar[E.EP_T]                                   # the time limit in slots
    # every interval ends by its 100th ABR cell or by the time limit, whichever first
    by_cells = il[:, L.IL_BYTIME] == 0
    assert np.all(il[by_cells, L.IL_NABR] == 100) and np.all(il[by_cells, L.IL_DT] <= tmax)
    assert np.all(il[~by_cells, L.IL_DT] >= tmax) and np.all(il[~by_cells, L.IL_NABR] < 100)
    assert np.all((0 <= il[:, L.IL_CABR]) & (il[:, L.IL_CABR] <= 1))
    np.testing.assert_allclose(il[:, L.IL_CABR], np.maximum(0, 1 - il[:, L.IL_NVBR] / il[:, L.IL_DT]))
    # every BRM that reached its source was stamped first
    assert len(bl) >= out[L.LO_BRM_RECV] > 0
    assert np.all(bl[:, L.BL_ER] <= 1.0 + 1e-12)
