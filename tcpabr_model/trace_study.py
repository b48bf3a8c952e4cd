"""The paper's question on a measured link: analysis on a fitted chain, simulation on the
fitted chain, simulation replaying the trace itself (issue 15 item 6).

One *point* is a trace, a round trip, a buffer and a feedback scheme
(``'none'`` = TCP alone, ``'instcap'``, ``'effcap'``).  :func:`study_point` returns

``analysis``
    the Markov renewal band ``[conservative, optimistic]`` (seed 004 Sec. III, eq. 18 and
    the conservative bound) of the K-state engine on the chain fitted at epoch = RTT (the
    embedding of assumption III-B.1), for TCP alone and INSTCAP; EFFCAP has no Markov
    model (its rate is a moving minimum of block averages, eq. 28, not a function of the
    embedded state), so its analysis is ``None`` with the reason;
``fitted``
    the cell simulator driven by the fitted chain (:class:`tcpabr_model.sim.Scenario` with
    ``capacity=model``);
``trace``
    the cell simulator replaying the trace's delivery opportunities (random start per
    replication, repeated as Mahimahi does).

Units [choice]: one packet is one Mahimahi opportunity, 1500 bytes = a 1460-byte segment
and 40 bytes of TCP/IP headers (``payload_bytes=1460``).  Efficiency is throughput over the
mean available capacity.  For the simulations it is ``efficiency_wire`` (over ABR the frames
count whole on the wire: the cell tax 1500/1696 is not charged), which is the analysis'
definition (packets over capacity in packets).  The buffer is in packets (over ATM
``bmax x 32`` cells), the window ``wmax`` in packets.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ._validate import check_choice, check_int, check_real

__all__ = ["StudyPoint", "study_point", "fit_for_rtt", "window_packets", "analysis_band", "lift_outage",
           "PAYLOAD_BYTES", "FEEDBACKS"]

PAYLOAD_BYTES = 1460    # + 40 B TCP/IP = 1500 B: one Mahimahi delivery opportunity
FEEDBACKS = ("none", "instcap", "effcap")


@dataclass(frozen=True)
class StudyPoint:
    """One point of the study; efficiencies are dimensionless (see the module docstring)."""

    rtt: float                      # seconds
    bmax: int                       # packets
    wmax: int                       # packets
    feedback: str
    states: int                     # K of the fitted chain
    analysis_conservative: float | None
    analysis_optimistic: float | None
    analysis_note: str              # states and seconds, or why there is no analysis
    fitted: float
    fitted_half_width: float
    trace: float
    trace_half_width: float

    @property
    def fitted_rel_error(self) -> float:
        """(fitted - trace) / trace: how far the Markov fit's simulation is from the replay."""
        return (self.fitted - self.trace) / self.trace if self.trace else float("nan")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["fitted_rel_error"] = self.fitted_rel_error
        return d


def window_packets(peak_rate: float, rtt: float, bmax: int) -> int:
    """Receiver window [choice]: twice what the pipe at the peak level and the buffer hold
    (at least 16 packets), so that it limits the analysis' chain and nothing else."""
    return max(16, int(math.ceil(2.0 * (peak_rate * rtt + bmax))))


def fit_for_rtt(trace, rtt: float, **kwargs):
    """The chain of the study: :func:`tcpabr_model.capacity.fit_trace` at ``epoch = rtt``."""
    from .capacity import fit_trace

    return fit_trace(trace, epoch=check_real("rtt", rtt, 0.001, 100.0), **kwargs)


def lift_outage(model, rtt: float):
    """``model`` (levels in packets/s) with every level below one packet per round trip
    raised to it: the chain the K-state engine can carry (:func:`analysis_band`)."""
    from .capacity import CapacityModel

    levels = np.maximum(np.asarray(model.levels, dtype=float), 1.0 / rtt)
    return CapacityModel(levels, transition=model.transition, epoch=model.epoch, time_unit=model.time_unit,
                         packet_bytes=model.packet_bytes)


def analysis_band(model, rtt: float, bmax: int, wmax: int, feedback: str, max_states: int = 2_000_000):
    """(conservative, optimistic, note) of the K-state engine on ``model`` (levels in packets
    per second, epoch = ``rtt`` s); (None, None, reason) where there is no analysis.

    **[choice]** The engine's service times are ``1 / c_k`` and it needs at least one packet
    per round trip at every level (``delta x c_k >= 1``), so an outage level (0) is lifted to
    one packet per round trip for the analysis only, and the note says so; the simulations
    keep the outage.
    """
    if feedback == "effcap":
        return None, None, "no Markov model of EFFCAP (eq. 28)"
    from .errors import ModelError
    from .markov import Scenario as MScenario, analyze

    delta = rtt * float(np.max(model.levels))   # the round trip in packet times at the peak level
    note = ""
    if float(np.min(model.levels)) < 1.0 / rtt:
        note = f"levels below 1 packet/RTT (outage) lifted to {1.0 / rtt:.0f} packets/s; "
        model = lift_outage(model, rtt)
    try:
        r = analyze(MScenario(delta=delta, bmax=bmax, wmax=wmax, feedback=feedback, capacity=model,
                              max_states=max_states))
    except (ValueError, ModelError, MemoryError) as e:
        return None, None, note + str(e)
    return r.conservative, r.optimistic, note + f"{r.n_states} states"


def _simulate(capacity, rtt, bmax, wmax, feedback, replications, duration, seed, workers):
    from .sim import Scenario, TcpConfig, simulate

    sc = Scenario(feedback=feedback, rtt=rtt, buffer_packets=bmax, payload_bytes=PAYLOAD_BYTES, capacity=capacity,
                  duration=duration, warmup=min(10.0, duration / 10.0), tcp=TcpConfig(wmax=wmax))
    r = simulate(sc, replications=replications, seed=seed, workers=workers)
    w = r.efficiency_wire
    return float(w.mean), float(w.half_width) if w.half_width is not None else float("nan")


def study_point(trace, fit, rtt: float, bmax: int, feedback: str, *, wmax: int | None = None,
                replications: int = 5, duration: float = 140.0, seed: int = 1, workers: int = 1,
                max_states: int = 2_000_000) -> StudyPoint:
    """Analysis and simulation on ``fit.model`` and simulation on ``trace`` at one point.

    Parameters
    ----------
    trace : tcpabr_model.capacity.Trace
    fit : tcpabr_model.capacity.TraceFit
        Usually :func:`fit_for_rtt` ``(trace, rtt)``.
    rtt : float
        Round-trip propagation delay, seconds.
    bmax : int
        Bottleneck buffer, packets.
    feedback : {'none', 'instcap', 'effcap'}
    wmax : int, optional
        Receiver window, packets (default :func:`window_packets`).
    replications, duration, seed, workers
        Of both simulations (duration in simulated seconds per replication).
    """
    check_choice("feedback", feedback, FEEDBACKS)
    rtt = check_real("rtt", rtt, 0.001, 100.0)
    bmax = check_int("bmax", bmax, 1, 1_000_000)
    model = fit.model
    peak = float(np.max(model.levels))
    wmax = window_packets(peak, rtt, bmax) if wmax is None else check_int("wmax", wmax, 1, 10**6)
    lo, hi, note = analysis_band(model, rtt, bmax, wmax, feedback, max_states)
    fm, fh = _simulate(model, rtt, bmax, wmax, feedback, replications, duration, seed, workers)
    tm, th = _simulate(trace, rtt, bmax, wmax, feedback, replications, duration, seed, workers)
    return StudyPoint(rtt, bmax, wmax, feedback, fit.states, lo, hi, note, fm, fh, tm, th)
