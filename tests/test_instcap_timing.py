"""INSTCAP's feedback timing (issue 23, docs/model.md sec. 16): the study and ``tcpabr simulate
--capacity-trace`` time INSTCAP as the analysis models it (III-A.8: the source's rate over one round
trip is the link's over the round trip before), and the simulator so timed agrees with the analysis
where the simulator's testbed timing (s = 30 ms, applied one round trip later) does not."""

from __future__ import annotations

import numpy as np
import pytest

from tcpabr_model.capacity import read_trace
from tcpabr_model.sim import Scenario, TcpConfig, simulate
from tcpabr_model.sim.cli import _scenario
from tcpabr_model.trace_study import INSTCAP_TIMINGS, PAYLOAD_BYTES, analyze_link, feedback_timing, fit_link

RTT = 0.02


def test_feedback_timing_fields():
    assert INSTCAP_TIMINGS == ("round-trip", "testbed")
    assert feedback_timing("instcap", 0.05) == {"interval": 0.05, "feedback_delay": 0.0}
    assert feedback_timing("instcap", 0.05, "testbed") == {}
    assert feedback_timing("none", 0.05) == {}
    assert feedback_timing("effcap", 0.05) == {}
    with pytest.raises(ValueError, match="instcap_timing"):
        feedback_timing("instcap", 0.05, "paper")


def _cli_scenario(*extra):
    from tcpabr_model.cli import build_parser

    args = build_parser().parse_args(["simulate", "--capacity-trace", "tests/data/markov3_outage.down", "--rtt", "0.2",
                                      "--bmax", "50", *extra])
    return _scenario(args)


def test_simulate_capacity_trace_times_instcap_as_the_analysis():
    sc = _cli_scenario()                       # the default feedback is INSTCAP
    assert sc.interval == pytest.approx(0.2) and sc.feedback_delay == (0.0,)
    sc = _cli_scenario("--interval", "0.03")   # a timing given is kept, with the default delay
    assert sc.interval == pytest.approx(0.03) and sc.feedback_delay == (pytest.approx(0.2),)
    sc = _cli_scenario("--feedback-delay", "0.1")
    assert sc.interval == pytest.approx(0.03) and sc.feedback_delay == (pytest.approx(0.1),)
    sc = _cli_scenario("--feedback", "effcap")
    assert sc.interval == pytest.approx(0.03)


@pytest.fixture(scope="module")
def two_level_link(tmp_path_factory):
    """A link of 12 and 4 opportunities per 20-ms epoch, spread evenly, switching with probability
    0.3 per epoch (60 s): the fit finds the two levels."""
    rng = np.random.default_rng(3)
    levels, k, lines = (12, 4), 0, []
    for e in range(3000):
        n = levels[k]
        lines += [str(e * 20 + int(np.ceil((i + 1) * 20 / n))) for i in range(n)]
        if rng.random() < 0.3:
            k = 1 - k
    p = tmp_path_factory.mktemp("timing") / "two.trace"
    p.write_text("\n".join(lines) + "\n")
    trace = read_trace(p)
    link = fit_link(trace, RTT)
    assert np.allclose(np.sort(link.fit.model.levels) * RTT, [4, 12])
    return trace, link


def _replay(trace, bmax, timing):
    sc = Scenario(feedback="instcap", rtt=RTT, buffer_packets=bmax, payload_bytes=PAYLOAD_BYTES, capacity=trace,
                  duration=59.0, warmup=5.0, capacity_offset=0.0, tcp=TcpConfig(wmax=40),
                  **feedback_timing("instcap", RTT, timing))
    return simulate(sc, replications=1, seed=1).efficiency_wire.mean


def test_a_buffer_that_absorbs_one_round_trip_of_mismatch_loses_nothing(two_level_link):
    """B_max 10 holds the 12 - 4 = 8 packets that one round trip at the previous level leaves: with
    the analysis' timing nothing is lost (analysis and simulator 1); the testbed's older feedback
    overruns the buffer (measured 0.70)."""
    trace, link = two_level_link
    an = analyze_link(link, 10, "instcap", wmax=40)
    assert an.prediction == pytest.approx(1.0, abs=1e-9)
    assert _replay(trace, 10, "round-trip") > 0.99
    assert _replay(trace, 10, "testbed") < 0.8


def test_the_analysis_follows_the_round_trip_timing(two_level_link):
    """B_max 6: analysis 0.628; simulator 0.649 with the round-trip timing, 0.565 with the
    testbed's (measured; docs/model.md sec. 16)."""
    trace, link = two_level_link
    an = analyze_link(link, 6, "instcap", wmax=40).prediction
    rt = _replay(trace, 6, "round-trip")
    tb = _replay(trace, 6, "testbed")
    assert abs(an / rt - 1.0) < 0.06
    assert tb < rt - 0.05


def test_the_designer_says_when_its_simulated_instcap_is_older_than_the_analysis():
    """The designer simulates INSTCAP with the simulator's timing (EFFCAP's too, a fair comparison)
    and says where the analysis beside it is of a different INSTCAP (docs/model.md sec. 16)."""
    from tcpabr_model.design.analysis import INSTCAP_LAG_HOLDS, instcap_timing_strain

    paper = Scenario()                                   # Delta 200 ms, s 30 ms, fed back 200 ms later
    assert paper.rtt[0] == pytest.approx(0.2) and INSTCAP_LAG_HOLDS == 1.25
    assert instcap_timing_strain(paper) is None          # 1.15 round trips
    short = paper.with_(rtt=0.05, feedback_delay=0.05)   # 80 ms against 50: 1.6 round trips
    msg = instcap_timing_strain(short)
    assert msg is not None and "1.6 round trips old" in msg and "s = 0.03 s" in msg
    assert instcap_timing_strain(short.with_(**feedback_timing("instcap", 0.05))) is None
