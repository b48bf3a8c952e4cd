"""Drop policies: decision functions on hand-built buffer states, and the kernel's
per-cell admission (EPD threshold, PPD, tail drop, threshold policy)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from tcpabr_model.sim import DropPolicy
from tcpabr_model.sim.arrays import layout as L
from tcpabr_model.sim.switch.drop_policies import epd_admit, fba_admit, frame_admit, gfr_admit, sd_admit, uniform01
from tcpabr_model.sim.kernels.port_arrival import arrive


# ---- GFR: every branch of the seed-002 pseudocode ------------------------------------
# K = 1000, R = 900, R_i = 100, Z = 1.5 (Z R_i = 150), W_i = 1
@pytest.mark.parametrize("x, xi, tagged, u, expected, branch", [
    (500, 50, False, 0.0, True, "X_i < R_i and X < R: accept whatever u"),
    (500, 50, True, 0.0, True, "first branch ignores tagging"),
    (500, 100, False, 0.01, True, "X_i = R_i: probability 0, u > 0 accepts"),
    (500, 125, False, 0.51, True, "X_i halfway to Z R_i: P(drop) = 0.5, u = 0.51 accepts"),
    (500, 125, False, 0.49, False, "same state, u = 0.49 drops"),
    (500, 125, True, 0.99, False, "tagged cell above R_i is dropped"),
    (500, 150, False, 0.999, False, "X_i = Z R_i: dropped (EPD per VC)"),
    (500, 200, False, 0.999, False, "X_i > Z R_i: dropped"),
    (900, 50, False, 0.999, False, "X = R: congestion, dropped even below R_i"),
    (950, 120, False, 0.999, False, "X > R and X_i > R_i: dropped"),
])
def test_gfr_decision_table(x, xi, tagged, u, expected, branch):
    assert gfr_admit(float(x), float(xi), 900.0, 100.0, 1.5, 1.0, tagged, u) is expected, branch
    assert frame_admit(L.POL_GFR, float(x), float(xi), 3.0, 1000.0, 900.0, 1.5, 100.0, 1.0, tagged, u) is expected


def test_gfr_weight_scales_drop_probability():
    # X_i = 1.25 R_i: P(drop) = W_i * 0.5
    assert gfr_admit(100.0, 125.0, 900.0, 100.0, 1.5, 0.5, False, 0.26)      # P = 0.25
    assert not gfr_admit(100.0, 125.0, 900.0, 100.0, 1.5, 0.5, False, 0.24)


def test_epd_sd_fba_formulas():
    assert epd_admit(899.0, 900.0) and not epd_admit(900.0, 900.0)
    # SD: X > R and X_i N_a / X > Z
    assert sd_admit(800.0, 500.0, 2.0, 900.0, 0.8)            # below R
    assert not sd_admit(950.0, 500.0, 2.0, 900.0, 0.8)        # 500*2/950 = 1.05 > 0.8
    assert sd_admit(950.0, 300.0, 2.0, 900.0, 0.8)            # 0.63 < 0.8
    # FBA: X_i N_a / X > Z (K - R) / (X - R), K = 1000, R = 500
    assert fba_admit(750.0, 300.0, 3.0, 1000.0, 500.0, 0.8)   # 1.2 < 0.8 * 500 / 250 = 1.6
    assert fba_admit(900.0, 300.0, 3.0, 1000.0, 500.0, 0.8)   # 1.0 = 0.8 * 500 / 400: not above
    assert not fba_admit(950.0, 300.0, 3.0, 1000.0, 500.0, 0.8)  # 0.947 > 0.8 * 500 / 450 = 0.889
    assert fba_admit(400.0, 400.0, 1.0, 1000.0, 500.0, 0.8)   # below R
    for pol in (L.POL_TAIL, L.POL_PPD):
        assert frame_admit(pol, 1e9, 1e9, 1.0, 1.0, 0.0, 0.8, 1.0, 1.0, True, 0.0)


@given(hs.integers(0, 10**9), hs.integers(0, 10**6))
@settings(max_examples=200, deadline=None)
def test_uniform_in_unit_interval(key, counter):
    u = uniform01(key, counter)
    assert 0.0 <= u < 1.0


def test_policy_parameters_validated():
    with pytest.raises(ValueError, match="z=0.5"):
        DropPolicy("gfr", z=0.5)
    with pytest.raises(ValueError, match="kind='red'"):
        DropPolicy("red")
    with pytest.raises(ValueError, match="threshold=-1"):
        DropPolicy("epd", threshold=-1)
    with pytest.raises(ValueError, match="threshold=2000"):
        DropPolicy("epd", threshold=2000).resolved(1000, 12)


# ---- the kernel's admission of single cells on hand-built buffer states ----------------
class Port1:
    """One port, two UBR VCs (one connection each), arrays as the kernel holds them."""

    def __init__(self, policy, k=100, r=0.0, z=0.8, ri=(0.0, 0.0)):
        self.gpar = np.zeros(L.G_NPAR, dtype=np.int64)
        self.qcap = np.array([[8, 8, k]], dtype=np.int64)
        self.qpol = np.array([[L.POL_TAIL, L.POL_PPD, policy]], dtype=np.int64)
        self.qfpar = np.zeros((1, 3, L.QP_NPAR))
        self.qfpar[0, 2] = (r, z)
        self.vthr = np.zeros((2, 1, 2))
        self.vthr[:, 0, 0] = ri
        self.vthr[:, 0, 1] = 1.0
        self.qbase = np.array([0, 8, 16, 16 + k], dtype=np.int64)
        self.qh = np.zeros(3, dtype=np.int64)
        self.qn = np.zeros(3, dtype=np.int64)
        n = 16 + k
        self.qv = np.zeros(n, dtype=np.int32)
        self.qc = np.zeros(n, dtype=np.int32)
        self.qs = np.zeros(n, dtype=np.int64)
        self.qi = np.zeros(n, dtype=np.int32)
        self.occ = np.zeros((2, 1), dtype=np.int64)
        self.nact = np.zeros((1, 3), dtype=np.int64)
        self.ppdf = np.zeros((2, 1), dtype=np.int8)
        self.armed = np.ones((2, 1), dtype=np.int8)
        self.lot = np.zeros(1, dtype=np.int64)
        self.pst = np.zeros((1, L.PS_NSTATE), dtype=np.int64)
        self.st = np.zeros((2, L.S_NSTATE), dtype=np.int64)
        self.vst = np.zeros((2, L.V_NSTATE), dtype=np.int64)
        self.vpar = np.zeros((2, L.VP_NPAR), dtype=np.int64)
        self.vpar[:, L.VP_CLASS] = L.CL_UBR
        self.vpar[1, L.VP_CONN0] = 1
        self.e = np.zeros(0, dtype=np.int64)
        self.fu = np.zeros(0, dtype=np.int8)

    def cell(self, v, cidx, upf=4, seq=0):
        info = L.KIND_DATA | (cidx << L.INFO_CIDX_SHIFT) | (L.INFO_EOM if cidx == upf - 1 else 0)
        return arrive(0, v, v, seq, info, True, self.gpar, self.qcap, self.qpol, self.qfpar, self.vthr,
                       self.qbase, self.qh, self.qn, self.qv, self.qc, self.qs, self.qi, self.occ, self.nact,
                       self.ppdf, self.armed, self.lot, self.pst, self.st, self.vst, self.vpar, self.e, self.e,
                       self.fu)

    def frame(self, v, upf=4, seq=0):
        return [self.cell(v, i, upf, seq) for i in range(upf)]

    def serve(self, n):
        """Remove n cells from the head of the UBR queue (accounting as the kernel does)."""
        for _ in range(n):
            j = 2
            pos = self.qbase[j] + self.qh[j]
            self.qh[j] = (self.qh[j] + 1) % self.qcap[0, 2]
            self.qn[j] -= 1
            v = self.qv[pos]
            self.occ[v, 0] -= 1
            if self.occ[v, 0] == 0:
                self.nact[0, 2] -= 1


def test_epd_never_admits_a_new_frame_at_or_above_threshold():
    b = Port1(L.POL_EPD, k=100, r=10.0)
    for f in range(2):
        assert b.frame(0) == [1, 1, 1, 1]
    b.frame(1)[:2]                       # 12 cells queued, >= R = 10
    assert b.qn[2] == 12
    assert b.frame(0, seq=5) == [0, 0, 0, 0]          # whole frame rejected
    assert b.st[0, L.S_FDROP] == 1 and b.st[0, L.S_CDROP] == 4
    b.serve(3)                           # 9 < R: admitted again
    assert b.frame(0, seq=6) == [1, 1, 1, 1]


def test_epd_frame_in_progress_continues_above_threshold():
    b = Port1(L.POL_EPD, k=100, r=6.0)
    b.frame(0)                           # 4 cells
    first = [b.cell(1, 0), b.cell(1, 1)]  # VC 1 starts below R (X = 4 < 6)
    b.frame(0)                           # X >= R now? 6 -> rejected
    assert first == [1, 1]
    assert [b.cell(1, 2), b.cell(1, 3)] == [1, 1]     # accepted although X > R


def test_ppd_discards_the_rest_of_a_frame_after_a_loss():
    b = Port1(L.POL_PPD, k=6)
    assert b.frame(0) == [1, 1, 1, 1]
    assert [b.cell(1, 0), b.cell(1, 1), b.cell(1, 2)] == [1, 1, 0]   # buffer full at the third cell
    b.serve(6)                                                      # room again
    assert b.cell(1, 3) == 0                                        # the EOM is discarded too
    assert b.st[1, L.S_FDROP] == 1 and b.st[1, L.S_CDROP] == 2
    assert b.frame(1, seq=1) == [1, 1, 1, 1]                        # next frame admitted


def test_tail_drop_keeps_admitting_cells_of_a_damaged_frame():
    b = Port1(L.POL_TAIL, k=6)
    b.frame(0)
    assert [b.cell(1, 0), b.cell(1, 1), b.cell(1, 2)] == [1, 1, 0]
    b.serve(6)
    assert b.cell(1, 3) == 1                     # tail drop has no frame awareness
    assert b.st[1, L.S_FDROP] == 1               # the frame is counted once


def test_selective_drop_rejects_the_vc_using_more_buffer():
    b = Port1(L.POL_SD, k=100, r=10.0, z=0.8)
    for s in range(3):
        b.frame(0, seq=s)                 # VC 0: 12 cells
    b.frame(1)                            # VC 1: 4 cells, X = 16 > R
    assert b.frame(0, seq=3) == [0, 0, 0, 0]       # 12 * 2 / 16 = 1.5 > 0.8
    assert b.frame(1, seq=1) == [1, 1, 1, 1]       # 4 * 2 / 16 = 0.5


def test_threshold_policy_drops_one_frame_per_upward_crossing():
    b = Port1(L.POL_THRESH, k=1000, ri=(8.0, 1000.0))
    assert b.frame(0, seq=0) == [1, 1, 1, 1]
    assert b.frame(0, seq=1) == [1, 1, 1, 1]       # X_0 = 8 = R_0 now
    assert b.frame(0, seq=2) == [0, 0, 0, 0]       # crossing: one frame dropped
    assert b.frame(0, seq=3) == [1, 1, 1, 1]       # disarmed: the rest of the window is accepted
    assert b.frame(0, seq=4) == [1, 1, 1, 1]
    b.serve(16)                                    # occupancy falls below R_0
    assert b.frame(0, seq=5) == [1, 1, 1, 1]       # re-armed on arrival below R_0
    b.frame(0, seq=6)
    assert b.frame(0, seq=7) == [0, 0, 0, 0]       # next crossing: one more drop
    assert b.st[0, L.S_FDROP] == 2


def test_gfr_kernel_path_drops_above_z_ri():
    b = Port1(L.POL_GFR, k=1000, r=900.0, z=1.5, ri=(8.0, 8.0))
    assert b.frame(0, seq=0) == [1, 1, 1, 1]
    assert b.frame(0, seq=1) == [1, 1, 1, 1]
    b.frame(0, seq=2)                    # X_0 = 8 = R_0: lottery with P = 0
    assert b.occ[0, 0] == 12
    assert b.frame(0, seq=3) == [0, 0, 0, 0]       # X_0 = 12 = Z R_0: always dropped
