"""Window-to-throughput, ATM accounting, fairness and efficiency formulas."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import tcpabr_model.closed_forms as cf


@pytest.mark.parametrize(
    "cwnd,printed,digit",
    [(91232, 24.32, 0.01), (181952, 48.5, 0.1), (363392, 96.9, 0.1)],
)
def test_seed002_eq1_reference_throughputs(cwnd, printed, digit):
    # seed 002 Sec. 2: RTT 30 ms; the paper prints eq. 1 values rounded/truncated
    assert abs(cf.throughput_from_window(cwnd, 0.030) - printed) <= digit


def test_seed002_eq1_cap():
    assert cf.throughput_from_window(600000, 0.03) == pytest.approx(160.0)
    cap = cf.tcp_max_throughput(155.52, 1024, sonet=True)
    assert cf.throughput_from_window(600000, 0.03, cap_mbps=cap) == pytest.approx(cap)


def test_eq2_sympy_closed_form_and_exact_sum():
    import sympy as sy

    d = cf.derive_eq2_closed_form()
    s = d["symbols"]
    assert sy.simplify(d["avg"] - (3 * s["W"] / 4 + s["MSS"] / (2 * s["b"]))) == 0
    for W, mss, b in ((64, 1, 1), (128, 1, 2), (250000, 1000, 1)):
        T = b * W // (2 * mss)
        exact = sum(Fraction(W, 2) + Fraction(mss, b) * i for i in range(1, T + 1)) / T
        assert cf.average_window_linear(W, mss, acks_per_increment=b) == pytest.approx(float(exact), rel=1e-15)
        assert cf.average_window_linear_sum(W, mss, T, acks_per_increment=b) == pytest.approx(float(exact), rel=1e-15)


def test_sawtooth():
    assert cf.sawtooth_average_window(40) == 30.0
    assert cf.sawtooth_average_window(9, weighting="packet") == pytest.approx(7.0)
    assert cf.sawtooth_throughput(40, 50) == pytest.approx(0.6)
    with pytest.raises(ValueError, match="weighting"):
        cf.sawtooth_average_window(40, weighting="x")


def test_fifo_share():
    mu = cf.fifo_share(126.0, [100, 200, 300, 400])
    assert mu == pytest.approx([12.6, 25.2, 37.8, 50.4])
    with pytest.raises(ValueError, match="occupancy"):
        cf.fifo_share(1.0, [0, 0])
    with pytest.raises(ValueError, match="mu"):
        cf.fifo_share(-1.0, [1, 2])


@pytest.mark.parametrize("mss", [1, 8, 9, 40, 41, 512, 1024, 1460, 9180])
def test_cells_padding_consistent(mss):
    n = cf.cells_per_packet(mss)
    pad = cf.padding_bytes(mss)
    assert 0 <= pad < 48
    assert 48 * n == mss + 56 + pad


def test_tcp_max_reference_values():
    # seed 000: 512 B segments, 80.5 %, 125.2 Mbps on 155.52 Mbps (no SONET framing)
    assert cf.tcp_efficiency(512) == pytest.approx(0.805, abs=5e-4)
    assert cf.tcp_max_throughput(155.52, 512) == pytest.approx(125.2, abs=0.05)
    # seed 000: half the link to VBR -> "about 63 Mbps"
    assert 0.5 * cf.tcp_max_throughput(155.52, 512) == pytest.approx(63, abs=0.5)
    # seed 002: 1024 B segments, "126 Mbps" with SONET STS-3c framing
    assert cf.tcp_max_throughput(155.52, 1024, sonet=True) == pytest.approx(126, abs=0.5)
    assert cf.cells_per_packet(1024) == 23
    # seed 004: 5 header bytes in 53 -> about 90 %
    assert cf.atm_cell_efficiency() == pytest.approx(0.9, abs=0.01)


def test_atm_bad_inputs():
    with pytest.raises(ValueError, match="mss"):
        cf.cells_per_packet(0)
    with pytest.raises(ValueError, match="link_rate"):
        cf.tcp_max_throughput(0, 512)
    with pytest.raises(ValueError, match="llc_snap"):
        cf.Encapsulation(llc_snap=-1)


@settings(deadline=None, max_examples=100)
@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=30).filter(lambda v: sum(v) > 0))
@example([5e-324, 1e-300])  # squares underflow: the index must still be exact
@example([1e6, 0.0, 1e-300])
def test_jain_index_in_bounds(xs):
    j = cf.jain_index(xs)
    n = len(xs)
    assert 1.0 / n - 1e-12 <= j <= 1.0
    # the definition, evaluated independently in exact rational arithmetic
    fx = [Fraction(x) for x in xs]
    exact = sum(fx) ** 2 / (n * sum(x * x for x in fx))
    assert j == pytest.approx(float(exact), rel=1e-12)
    # scale invariance
    assert cf.jain_index([3.0 * x for x in xs]) == pytest.approx(j, rel=1e-12)


def test_jain_index_values():
    assert cf.jain_index([5, 5, 5, 5]) == 1.0
    assert cf.jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    grid = np.array([[1.0, 1.0], [1.0, 0.0]])
    assert cf.jain_index(grid) == pytest.approx([1.0, 0.5])
    with pytest.raises(ValueError, match="undefined"):
        cf.jain_index([0.0, 0.0])
    with pytest.raises(ValueError, match="x="):
        cf.jain_index([-1.0, 2.0])


def test_efficiencies():
    assert cf.efficiency_seed000([60.0, 65.2], 125.2) == pytest.approx(1.0)
    assert cf.efficiency_seed001([1.0, 2.0, 3.0]) == 6.0
    assert cf.efficiency_seed001([1.0, 2.0, 3.0], 12.0) == 0.5
    assert cf.efficiency_seed004(0.6, 0.75) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="mean_capacity"):
        cf.efficiency_seed004(0.6, 0.0)


def test_window_bad_inputs():
    with pytest.raises(ValueError, match="rtt_s"):
        cf.throughput_from_window(1000, 0)
    with pytest.raises(ValueError, match="cwnd_avg_bytes"):
        cf.throughput_from_window(-1, 0.1)
    with pytest.raises(ValueError, match="mss"):
        cf.average_window_linear(100, 0)


def test_formula_json_states_units_and_the_overhead_counted(capsys):
    import json

    from tcpabr_model.cli import main
    assert main(["formula", "atm", "--mss", "9180", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["units"]["tcp_max_throughput"] == "Mbit/s of TCP data" and "AAL5 trailer 8" in out["overhead"]
    assert out["cells_per_packet"] == -(-(9180 + 56) // 48)
    assert main(["formula", "window", "--cwnd-avg", "60000", "--rtt", "0.03", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["units"]["cwnd_avg_bytes"] == "bytes"


def test_mss_beyond_one_aal5_frame_is_refused():
    from tcpabr_model.closed_forms.atm import cells_per_packet
    assert cells_per_packet(65487) == -(-(65487 + 56) // 48)
    with pytest.raises(ValueError, match=r"mss=65488 is invalid: must be in \[1, 65487\] bytes"):
        cells_per_packet(65488)
