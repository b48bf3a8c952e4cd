"""The designer's speed-ups change no number (issue 26: "one design at one point in < 30 s").

:func:`tcpabr_model.sim.driver.simulate_many` runs the replications of several scenarios in
one pool and is :func:`~tcpabr_model.sim.simulate` bit for bit; the designer submits every
candidate (both halves of a held-out design, every psi) to one pool.  The golden file
``tests/data/design_golden.json`` is the designer's output on a small case from the tree
before those changes (commit 84c0736), regenerated once on purpose since: the analysis of a
measured link uses the timer cycle (docs/model.md sec. 15; only the ``analysis`` records
moved, every simulated number is the same), and again when the timer cycle's occupancy got the
slow-start rounds' queue (docs/model.md sec. 13: only the analysis' delays moved, TCP alone's
queueing and INSTCAP's source delay), and when TCP alone's loss-free queue over service patterns
became the pattern replay's exact integral (the same fields), and when an outage in the slow
start came into the timer cycle (docs/model.md sec. 15a: the TCP-alone analyses' throughput,
band and delays), and when go-back-N's burst came into it (sec. 15b: the same fields; the designs
are the same), and when the held queue after a loss followed the next level and III-B.4's cycle over
ABR counted the slow start's pairs, and when a loss interval's queue stayed full after the loss
(docs/model.md sec. 13, Nov 28: only the analysis' mean delays of TCP alone and INSTCAP moved), and
when a timeout cycle over ABR held both buffers' backlog while the ACK clock runs (sec. 13, "Over ABR,
the backlog held": only INSTCAP's analysis delays moved, the designs are the same), and when a timeout
cycle waited out an outage once (sec. 15c, Nov 29: only the ``analysis`` records moved, on the trace), and
when every estimate got ``ci_low``/``ci_high`` (its interval clipped to the physical range, Nov 29: keys
added, no number moved).  Floats are compared to 1e-10 (``_assert_close``: the last bits of a solve depend on
the CPU);
regenerate it on purpose only, with
``PYTHONPATH=$PWD python tests/test_design_speed.py`` (docs/design.md "Time").
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tcpabr_model.capacity import Trace, read_trace
from tcpabr_model.design import Candidate, design, design_held_out, design_over_psi
from tcpabr_model.sim import Scenario, TcpConfig, simulate

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "design_golden.json"
_TIMES = ("seconds", "kernel_seconds", "cells_per_second")


def _strip(x):
    """``x`` without wall-clock times (they differ from run to run), NaN as ``"nan"``."""
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in _TIMES}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return "nan" if isinstance(x, float) and x != x else x     # NaN == NaN for the comparison


def _jsonable(x):
    from tcpabr_model.cli import jsonable

    return json.loads(json.dumps(jsonable(x)))


def _cases(workers: int = 1) -> dict:
    """The small cases of the golden file: a held-out design on the shipped 3-level trace
    and a design over psi 1 and 10 on the two-state link (2 replications, short runs)."""
    t = read_trace(str(DATA / "markov3_outage.down"))
    t = Trace(t.times_ms, name="markov3_outage.down", packet_bytes=t.packet_bytes)
    cands = (Candidate("effcap", m=2, n=1), Candidate("instcap", utilisation=0.9))
    base = Scenario(feedback="instcap", rtt=0.05, buffer_packets=6, payload_bytes=1460, capacity=t, duration=20.0,
                    tcp=TcpConfig(wmax=16))
    held = design_held_out(base, cands, replications=2, seed=0, workers=workers)
    psi = [Scenario.from_normalized(delta=40, bmax=10, psi=x, duration_units=4000) for x in (1.0, 10.0)]
    robust = design_over_psi(psi, (1.0, 10.0), (Candidate("none"), Candidate("instcap"),
                                                Candidate("effcap", m=2, n=4)),
                             replications=2, seed=0, workers=workers, max_p95_delay=0.2)
    return {"held_out": _strip(_jsonable(held.to_dict())), "over_psi": _strip(_jsonable(robust.to_dict()))}


def _assert_close(got, want, where: str = "") -> None:
    """``got == want`` with floats to 1e-10 (relative): the analysis' solves end in BLAS and SIMD
    kernels whose last bits depend on the CPU; every other value (choices, counts, text) exactly."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), (where, sorted(set(got) ^ set(want)))
        for k in want:
            _assert_close(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_close(g, w, f"{where}[{i}]")
    elif isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        assert abs(got - want) <= 1e-10 * abs(want) + 1e-15, (where, got, want)
    else:
        assert got == want, (where, got, want)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_design_tables_equal_the_golden_ones(workers):
    golden = json.loads(GOLDEN.read_text())
    _assert_close(_cases(workers), golden)


def test_the_golden_comparison_tolerates_ulps_only():
    _assert_close({"a": [1.0 + 1e-15, "x", 3]}, {"a": [1.0, "x", 3]})
    for got in ({"a": [1.0 + 1e-6, "x", 3]}, {"a": [1.0, "y", 3]}, {"a": [1.0, "x"]}, {"b": [1.0, "x", 3]}):
        with pytest.raises(AssertionError):
            _assert_close(got, {"a": [1.0, "x", 3]})


def test_simulate_many_is_simulate_bit_for_bit():
    from tcpabr_model.sim.driver import replication_pool, simulate_many

    base = Scenario.from_normalized(delta=40, bmax=10, psi=5, duration_units=3000)
    scs = [Candidate(fb).scenario(base) for fb in ("none", "instcap")] + [
        Candidate("effcap", m=2, n=4).scenario(base)]
    ref = [_strip(_jsonable(simulate(s, replications=3, seed=7).to_dict())) for s in scs]
    assert [_strip(_jsonable(r.to_dict())) for r in simulate_many(scs, replications=3, seed=7)] == ref
    with replication_pool(2) as pool:
        got = [_strip(_jsonable(r.to_dict())) for r in simulate_many(scs, replications=3, seed=7, pool=pool)]
    assert got == ref
    with pytest.raises(ValueError, match="scenarios=\\(\\) is invalid"):
        simulate_many([])


def test_design_points_are_simulate_of_each_candidate():
    """What design() did before it pooled the candidates: one simulate() per candidate."""
    base = Scenario.from_normalized(delta=40, bmax=10, psi=3, duration_units=3000)
    cands = (Candidate("none"), Candidate("instcap"), Candidate("effcap", m=1, n=4))
    d = design(base, cands, replications=2, seed=5, workers=2, analysis=False)
    for c, p in zip(cands, d.points):
        r = simulate(c.scenario(base), replications=2, seed=5)
        assert p.throughput == r.efficiency_wire and p.p95_delay == r.delay.total.p95
        assert p.mean_delay == r.delay.total.mean
    assert np.isfinite([p.throughput.mean for p in d.points]).all()


if __name__ == "__main__":     # regenerate the golden file (on purpose only)
    GOLDEN.write_text(json.dumps(_cases(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
