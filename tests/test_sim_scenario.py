"""Scenario validation, unit conversion and the EFFCAP notation helpers."""

import math

import pytest

from tcpabr_model.sim import Scenario, TcpConfig, m_from_delta, n_from_k


def test_paper_defaults_map_to_normalised_units():
    sc = Scenario.from_normalized(delta=40, bmax=10, psi=20)
    # 500 B payload + 40 TCP/IP + 8 LLC/SNAP + 8 AAL5 = 556 B -> ceil(556/48) = 12 cells
    assert sc.cells_per_frame == 12
    assert sc.frame_wire_bytes == 636
    assert sc.overhead_factor == pytest.approx(540 / 636, rel=1e-15)
    assert sc.time_unit == pytest.approx(0.005, rel=1e-15)       # 500 B / 100 kB/s
    assert sc.rtt == pytest.approx((0.2,), rel=1e-15)            # 40 time units = 200 ms
    assert sc.tau == pytest.approx(4.0, rel=1e-15)               # psi * Delta
    assert sc.psi == pytest.approx(20.0, rel=1e-15)
    assert sc.to_slots(sc.rtt[0]) == 480
    assert sc.to_slots(sc.interval) == 72                        # s = 30 ms
    assert sc.buffer_packets == 10
    assert sc.feedback_delay == sc.rtt                           # one round-trip delay
    assert sc.m == (1,) and sc.n == (1,)                         # INSTCAP


def test_section_vi_notation():
    assert m_from_delta(0.2, 0.03) == 7          # M : Delta
    assert n_from_k(2, 0.2, 0.03) == 7           # N : 2 Delta
    assert n_from_k(8, 0.2, 0.03) == 49          # N : 8 Delta
    assert m_from_delta(0.24, 0.03) == 8         # Section VII, session 1
    assert m_from_delta(0.36, 0.03) == 12        # session 2
    assert n_from_k(12, 0.24, 0.03) == 88
    assert n_from_k(12, 0.36, 0.03) == 132
    sc = Scenario.from_normalized(feedback="effcap")
    assert (sc.m, sc.n) == ((7,), (49,))


def test_two_sessions_section_vii():
    sc = Scenario(feedback="effcap", rtt=(0.24, 0.36), buffer_packets=18)
    assert sc.n_connections == 2
    assert sc.share == (0.5, 0.5)
    assert sc.m == (8, 12)
    assert sc.n == (56, 84)


@pytest.mark.parametrize("kwargs, match", [
    (dict(feedback="bogus"), "feedback='bogus' is invalid"),
    (dict(rate_ratio=0.0), "rate_ratio=0.0 is invalid"),
    (dict(buffer_packets=0), "buffer_packets=0 is invalid"),
    (dict(tau=-1.0), "tau=-1.0 is invalid"),
    (dict(feedback="instcap", m=7), "INSTCAP is M = N = 1"),
    (dict(feedback="effcap", m=(7, 7)), "one entry per connection"),
    (dict(capacity_mode="embedded", tau=0.1), "embedded mode needs psi"),
    (dict(interval=1e-6), "interval=1e-06 is invalid"),
    (dict(tcp="reno"), "must be a TcpConfig"),
    (dict(share=1.5), r"share\[0\]=1.5 is invalid"),
    (dict(discard="epd", epd_threshold_packets=0), "epd_threshold_packets=0 is invalid"),
    (dict(discard="epd", epd_threshold_packets=11), "epd_threshold_packets=11 is invalid"),
])
def test_bad_scenarios_raise_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Scenario(**kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(variant="vegas"), "variant='vegas' is invalid"),
    (dict(wmax=0), "wmax=0 is invalid"),
    (dict(delayed_ack=1), "delayed_ack=1 is invalid"),
    (dict(rto_min=2.0, rto_max=1.0), "rto_max=1.0 is invalid"),
])
def test_bad_tcp_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TcpConfig(**kwargs)


def test_from_normalized_rejects_bad_units():
    with pytest.raises(ValueError, match="psi=0 is invalid"):
        Scenario.from_normalized(psi=0)
    with pytest.raises(ValueError, match="delta=-4 is invalid"):
        Scenario.from_normalized(delta=-4)


def test_scenario_is_frozen_and_to_dict_is_jsonable():
    import json
    sc = Scenario.from_normalized()
    with pytest.raises(Exception):
        sc.tau = 1.0
    d = json.loads(json.dumps(sc.to_dict()))
    assert d["cells_per_frame"] == 12 and math.isclose(d["psi"], 20.0)


def test_constant_rate_source_at_the_low_rate_never_loses():
    # seed 004 Section IV's constant-rate ABR source: at the minimum capacity it can
    # never overflow the bottleneck, whatever the capacity process does
    from tcpabr_model.sim import simulate

    sc = Scenario.from_normalized(delta=40, bmax=10, psi=2, feedback="constant", initial_rate=0.5,
                                  duration_units=20_000)
    res = simulate(sc, replications=2, seed=4)
    assert res.counters["cells_dropped"] == 0
    assert res.counters["timeouts"] == 0


def test_constant_feedback_needs_a_rate_on_the_command_line(capsys):
    from tcpabr_model.cli import main

    assert main(["simulate", "--feedback", "constant", "--psi", "20"]) == 2
    assert "--source-rate" in capsys.readouterr().err  # the flag name (issue 17)


def test_results_do_not_depend_on_the_number_of_workers():
    from tcpabr_model.sim import simulate

    sc = Scenario.from_normalized(delta=40, bmax=10, psi=5, feedback="effcap", duration_units=40_000)
    one = simulate(sc, replications=3, seed=9).to_dict()
    two = simulate(sc, replications=3, seed=9, workers=2).to_dict()
    one.pop("speed")
    two.pop("speed")
    assert one == two


def test_invalid_workers():
    from tcpabr_model.sim import simulate

    with pytest.raises(ValueError, match="workers"):
        simulate(Scenario.from_normalized(delta=40, bmax=10, psi=5), replications=2, workers=0)



def test_effcap_takes_n_below_m_as_the_paper_does():
    """issue 24 asked to refuse N < M; seed 004 runs it: Figs. 17-18 vary M from 1 to 10 at
    N : 2 Delta, which is N = ceil(Delta / s) = 2 averages at Delta = 50 ms, s = 30 ms."""
    sc = Scenario(feedback="effcap", rtt=0.05, tau=1.0, interval=0.03, m=10, n=2)
    assert (sc.m, sc.n) == ((10,), (2,))
