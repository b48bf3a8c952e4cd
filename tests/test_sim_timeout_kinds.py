"""The simulator's timeout kinds (docs/simulator.md, "Timeout kinds"): diagnostic counters that
split ``timeouts`` into a repeated timeout of the same segment, a later hole of the same loss
event, a loss in slow start, and the rest.  They change no other number (the golden counters
of tests/test_sim_golden.py and tests/test_sim_mcr.py are unchanged)."""

import numpy as np
import pytest

from tcpabr_model.capacity import Trace
from tcpabr_model.sim import Scenario, TcpConfig, simulate

KINDS = ("timeouts_repeated", "timeouts_later_hole", "timeouts_in_slow_start")


def _run(delta, bmax, rate_ratio, psi=20.0, variant="timeout-only", seed=0):
    sc = Scenario.from_normalized(delta=delta, bmax=bmax, psi=psi, rate_ratio=rate_ratio, feedback="none", wmax=128,
                                  duration_units=80000, warmup_units=2000, tcp=TcpConfig(wmax=128, variant=variant))
    return simulate(sc, replications=1, seed=seed).counters


@pytest.mark.parametrize("args", [(26, 6, 1.0), (26, 15, 0.1), (40, 10, 0.5), (26, 15, 0.5, 20.0, "sack")])
def test_kinds_partition_part_of_the_timeouts(args):
    c = _run(*args)
    assert all(c[k] >= 0 for k in KINDS)
    assert sum(c[k] for k in KINDS) + c["timeouts_without_drop"] <= c["timeouts"]


def test_small_buffer_times_out_in_slow_start():
    """Constant capacity, B_max < (Delta + 1) / 3: slow start to half the window overflows the
    buffer (docs/validity.md, mechanism 4), so about half the timeouts are losses in slow
    start; with B_max above a third of the pipe almost none are."""
    small, large = _run(26, 6, 1.0), _run(26, 15, 1.0)
    assert small["timeouts"] > 0 and small["timeouts_in_slow_start"] >= 0.35 * small["timeouts"]
    assert large["timeouts_in_slow_start"] <= 0.05 * large["timeouts"]
    for c in (small, large):      # one loss per event at constant capacity: nothing repeats
        assert c["timeouts_repeated"] == 0 and c["timeouts_later_hole"] == 0
        assert c["timeouts_without_drop"] == 0     # and every timeout follows a drop: no silence


def test_a_silence_times_out_without_a_drop():
    """A link that serves every millisecond for 800 ms and then nothing for 200 ms, RTT 20 ms: the
    window (30) never fills the pipe and the buffer (20 + 50), so nothing is dropped, and the fixed RTO of
    two round trips expires in every silence: each fresh timeout is one without a drop."""
    t = np.concatenate([np.arange(1, 801) + 1000 * k for k in range(4)] + [np.array([4000])])
    sc = Scenario(feedback="none", rtt=0.02, buffer_packets=50, payload_bytes=1460, capacity=Trace(t, name="gaps"),
                  capacity_offset=0.0, duration=40.0, warmup=4.0, tcp=TcpConfig(wmax=30))
    c = simulate(sc, replications=1, seed=0).counters
    assert c["frames_dropped"] == 0 and c["timeouts"] > 0
    fresh = c["timeouts"] - sum(c[k] for k in KINDS)
    assert c["timeouts_without_drop"] == fresh > 0


def test_deep_queue_at_the_low_rate_repeats_timeouts():
    """Rate ratio 0.1: the buffer of 15 holds about six round trips at the low rate, longer than
    the fixed RTO of two, so the retransmission waits behind the queue and the timer fires
    again for the same segment; later holes of the same loss event time out too."""
    c = _run(26, 15, 0.1)
    assert c["timeouts_repeated"] >= 0.2 * c["timeouts"]
    assert c["timeouts_later_hole"] > 0
