"""Public entry point of the cell-level simulator: :func:`simulate`.

Replications are independent: replication ``r`` draws its capacity path from
``numpy.random.default_rng(SeedSequence(seed).spawn(...)[r])``, so results depend only on
the seed and the replication index (not on how many are run at once).  The kernel itself
draws no random numbers (TCP, ABR and the switch are deterministic given the capacity
path), so a run is bit-for-bit reproducible.

Confidence intervals (95 % by default) are Student-t intervals over independent
replications, or over batch means of one long run (``ci_method='batch'``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .._results import ResultMixin  # to_frame() / to_flat_dict() (issue 17)
from .._validate import check_choice, check_int, check_real
from ..errors import ModelError
from ..stats import Estimate, jain_index
from . import _kernel as K
from ._driver import replication_args, replication_pool, run_tasks
from .capacity import CapacityPath, trace_levels
from .network_run import draw_replication, fast_path_inputs, kernel_inputs, port_path
from .scenario import Scenario

__all__ = ["simulate", "SimulationResult", "Estimate", "Trace", "run_replication", "jain_index"]


@dataclass(frozen=True)
class Trace:
    """Series sampled every ``interval`` seconds (first replication only).

    Attributes: ``time`` (s), ``queue`` (bottleneck occupancy, units), ``capacity``
    (level index: 0 high, 1 low for the two-state process; the index into the sorted
    levels of a K-state model or a trace), ``cwnd`` / ``ssthresh`` (packets, one column per connection),
    ``source_rate`` (allowed rate, fraction of the high rate), ``segmentation_cells``
    (cells waiting at the source), ``delivered`` (cumulative in-order segments),
    ``measured`` (INSTCAP measurement per interval s) and ``feedback`` (eq. 28 value per
    interval and connection).
    """

    time: np.ndarray
    queue: np.ndarray
    capacity: np.ndarray
    cwnd: np.ndarray
    ssthresh: np.ndarray
    source_rate: np.ndarray
    segmentation_cells: np.ndarray
    delivered: np.ndarray
    measured: np.ndarray
    feedback: np.ndarray

    def to_dict(self) -> dict:
        return {k: getattr(self, k).tolist() for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class SimulationResult(ResultMixin):
    """Results of :func:`simulate` (keys of :meth:`to_dict` documented in docs/simulator.md).

    Attributes
    ----------
    efficiency : Estimate
        IP bytes (payload + TCP/IP headers) of in-order delivered segments / capacity on
        the wire, over the measured window (Section V's definition: ATM overhead counts as
        lost capacity).
    efficiency_wire : Estimate
        Same numerator counted as the wire bytes of each delivered frame (cell tax not
        counted as loss; equals ``efficiency`` for TCP alone).
    per_connection_efficiency : tuple of Estimate
        Each connection's IP-byte goodput / mean capacity.
    goodput_bps : tuple of Estimate
        Payload bytes per second delivered in order, per connection.
    fairness : Estimate
        Jain's index of the per-connection goodputs.
    cell_loss_ratio, frame_loss_ratio : Estimate
        Dropped / sent cells and frames at the bottleneck (all connections).
    counters : dict
        Totals over all replications (cells sent/served/dropped, frames, timeouts, ...).
    cells_simulated : int
        Cells sent by the sources + cells served or dropped at the bottleneck.
    cells_per_second : float
        ``cells_simulated`` / kernel wall time (compilation excluded).
    """

    scenario: Scenario
    seed: int
    replications: int
    ci_method: str
    efficiency: Estimate
    efficiency_wire: Estimate
    per_connection_efficiency: tuple
    goodput_bps: tuple
    fairness: Estimate
    cell_loss_ratio: Estimate
    frame_loss_ratio: Estimate
    counters: dict
    cells_simulated: int
    kernel_seconds: float
    cells_per_second: float
    slots_simulated: int
    trace: Trace | None = field(default=None, repr=False)

    def to_dict(self, include_trace: bool = False) -> dict:
        d = {
            "scenario": self.scenario.to_dict(),
            "seed": self.seed,
            "replications": self.replications,
            "ci_method": self.ci_method,
            "efficiency": self.efficiency.to_dict(),
            "efficiency_wire": self.efficiency_wire.to_dict(),
            "overhead_factor": self.scenario.overhead_factor,
            "per_connection_efficiency": [e.to_dict() for e in self.per_connection_efficiency],
            "goodput_bps": [e.to_dict() for e in self.goodput_bps],
            "fairness": self.fairness.to_dict(),
            "cell_loss_ratio": self.cell_loss_ratio.to_dict(),
            "frame_loss_ratio": self.frame_loss_ratio.to_dict(),
            "counters": self.counters,
            "speed": {"cells_simulated": self.cells_simulated, "kernel_seconds": self.kernel_seconds,
                      "cells_per_second": self.cells_per_second, "slots_simulated": self.slots_simulated},
        }
        if include_trace and self.trace is not None:
            d["trace"] = self.trace.to_dict()
        return d


_COUNTER_NAMES = {
    "cells_sent": K.S_CSENT, "cells_dropped": K.S_CDROP, "cells_served": K.S_CSERVED,
    "frames_sent": K.S_FSENT, "frames_dropped": K.S_FDROP, "frames_reassembled": K.S_FDELIV,
    "segments_sent": K.S_SEGSENT, "retransmissions": K.S_RETX, "timeouts": K.S_TIMEOUTS,
    "fast_retransmits": K.S_FASTRTX, "acks_sent": K.S_ACKS, "delivered_segments": K.S_GOODALL,
    "delivered_segments_measured": K.S_GOOD,
}


#: Limits of one replication, checked before anything is allocated (CHOICE: far above every
#: paper setting; psi = 0.05 with 2000 s is 2e5 capacity changes and 7e4 intervals).
MAX_CAPACITY_CHANGES = 50_000_000          # 400 MB of change epochs
MAX_SERIES_BYTES = 2 * 2**30               # per-interval measurement / feedback / sample series
_SLOTS_PER_SECOND = 3e7                    # rough kernel speed for the progress-bar decision


def capacity_changes_per_second(capacity, model_unit_seconds: float) -> float:
    """Expected (a model: at most) capacity changes per second of a CapacityModel or a Trace."""
    from ..capacity import Trace as LinkTrace

    if isinstance(capacity, LinkTrace):
        sidx = trace_levels(capacity)[0]
        return (int(np.count_nonzero(sidx[1:] != sidx[:-1])) + 1) / (sidx.size * 1e-3)
    unit = capacity.time_unit if capacity.time_unit is not None else model_unit_seconds
    if capacity.time == "discrete":
        return float(np.max(1.0 - np.diag(capacity.transition))) / (capacity.epoch * unit)
    return float(np.max(-np.diag(capacity.generator))) / unit


def resource_estimate(sc: Scenario, trace: bool = False) -> dict:
    """Expected capacity changes and bytes of per-interval series of one replication."""
    horizon = sc.total_slots * sc.slot_seconds
    if sc.capacity is not None:
        changes = horizon * capacity_changes_per_second(sc.capacity, sc.time_unit)
    else:
        mean_sojourn = sc.tau if sc.capacity_mode == "continuous" else sc.period
        changes = horizon / mean_sojourn
    nmeas = sc.total_slots / max(1, sc.to_slots(sc.interval))
    nsamp = nmeas if trace else 4000.0
    series = 8.0 * nmeas * (1 + sc.n_connections) + 8.0 * nsamp * (6 * sc.n_connections + 4)
    return {"capacity_changes": changes, "series_bytes": series, "intervals": nmeas}


def check_resources(sc: Scenario, trace: bool = False) -> None:
    """Refuse a replication that would exhaust memory, naming the estimate and the limit.

    Raises
    ------
    ValueError
        Naming ``psi`` (or ``tau``) and ``duration``, or ``duration`` and ``interval``.
    """
    e = resource_estimate(sc, trace)
    if e["capacity_changes"] > MAX_CAPACITY_CHANGES and sc.capacity is not None:
        raise ValueError(
            f"duration={sc.duration:g} s is invalid with this capacity {sc.capacity_kind}: it would change about "
            f"{e['capacity_changes']:.3g} times per replication; the limit is {MAX_CAPACITY_CHANGES:.3g}: "
            "shorten duration")
    if e["capacity_changes"] > MAX_CAPACITY_CHANGES:
        raise ValueError(
            f"psi={sc.psi:g} is invalid with duration={sc.duration:g} s: the capacity would change about "
            f"{e['capacity_changes']:.3g} times per replication ({8 * e['capacity_changes'] / 2**30:.3g} GiB of "
            f"change epochs); the limit is {MAX_CAPACITY_CHANGES:.3g}: raise psi or shorten duration")
    if e["series_bytes"] > MAX_SERIES_BYTES:
        raise ValueError(
            f"duration={sc.duration:g} s is invalid: one replication keeps {e['intervals']:.3g} measurement "
            f"intervals of {sc.interval:g} s, about {e['series_bytes'] / 2**30:.3g} GiB; the limit is "
            f"{MAX_SERIES_BYTES / 2**30:g} GiB: shorten duration or lengthen interval")


def estimated_kernel_seconds(sc: Scenario) -> float:
    """Rough kernel time of one replication (for progress reporting only, never asserted)."""
    return sc.total_slots / _SLOTS_PER_SECOND


def scenario_path(scenario: Scenario, rng: np.random.Generator, horizon: float) -> CapacityPath:
    """The bottleneck's capacity path of one replication on ``[0, horizon)`` slots (the
    two-state process, or the scenario's K-state model or trace): the draw of the network
    port that :meth:`Scenario.to_network` builds (:func:`.network_run.port_path`)."""
    net = scenario.to_network()
    return port_path(net, net.ports[0], rng, horizon)


def fast_path_args(scenario: Scenario, rng: np.random.Generator, force_drops=(), trace: bool = True) -> tuple:
    """The fast path's arguments for one replication of ``scenario``.

    There is one input builder for both kernels: the scenario becomes its network
    (:meth:`Scenario.to_network`), whose :func:`.network_run.kernel_inputs` and random draws
    (:func:`.network_run.draw_replication`) feed :func:`.network_run.fast_path_inputs`, as
    for :func:`~tcpabr_model.sim.simulate_network`.  With ``trace=False`` the series are
    sampled coarsely (about 4000 points, enough for batch means).
    """
    net = scenario.to_network()
    kin = kernel_inputs(net, force_drops)
    draw_replication(net, kin, rng)
    # the sampled series feed traces (every interval s) and batch means (about 4000 points
    # suffice); a multiple of s, so sampling adds no stopping points and results do not depend on it
    meas = int(kin["gpar"][K.G_MEAS])
    nslots = int(kin["gpar"][K.G_NSLOTS])
    args = fast_path_inputs(net, kin, sample=meas * (1 if trace else max(1, nslots // 4000 // meas)))
    if args is None:    # to_network() always qualifies: None here is a bug in one of the two
        raise ModelError("internal: Scenario.to_network() does not qualify for the single-bottleneck fast path")
    return args


def scenario_is_random(sc: Scenario) -> bool:
    """False when every replication of ``sc`` is the same run: a one-level capacity model, or a
    trace with one level or a fixed ``capacity_offset`` (the kernel draws nothing else)."""
    from ..capacity import Trace as LinkTrace

    cap = sc.capacity
    if cap is None:
        return True
    if isinstance(cap, LinkTrace):
        return sc.capacity_offset is None and trace_levels(cap)[1].size > 1
    return cap.n_levels > 1


def run_replication(scenario: Scenario, rng: np.random.Generator, force_drops=(), trace: bool = True):
    """Run one replication; returns the raw kernel outputs and the kernel wall time.

    Mostly for tests and benchmarks; :func:`simulate` is the public driver.  With
    ``trace=False`` the series are sampled coarsely (enough for batch means).  The third
    item is ``(g, gf, cp, cf, change epochs, level index at slot 0)``.
    """
    args = fast_path_args(scenario, rng, force_drops, trace)
    g, gf, cp, cf, ptimes = args[:5]
    t0 = time.perf_counter()
    out = K.simulate_kernel(*args)
    dt = time.perf_counter() - t0
    err = int(out[2][K.O_ERR])
    if err:
        what = {1: "segmentation queue", 2: "ACK ring", 3: "feedback ring"}.get(err, "internal")
        raise ModelError(f"simulation aborted: {what} overflow (the {what} grew without bound; "
                         "check the source rate, RTO and window settings)")
    return out, dt, (g, gf, cp, cf, ptimes, int(g[K.G_INITSTATE]))


def _replication_task(task):
    """One replication from a picklable (scenario, SeedSequence child, drops, trace) task."""
    scenario, child, force_drops, trace = task
    out, dt, (g, *_rest) = run_replication(scenario, np.random.default_rng(child), force_drops, trace=trace)
    return out, dt, g


def _rep_metrics(sc: Scenario, st, gout, g):
    atm = sc.feedback != "none"
    capwin = gout[K.O_CAPWIN] * sc.slot_bytes  # wire bytes of capacity in the measured window
    secs = (g[K.G_NSLOTS] - g[K.G_WARMUP]) * sc.slot_seconds
    good = st[:, K.S_GOOD].astype(float)
    ipb = sc.ip_packet_bytes
    wireb = sc.frame_wire_bytes if atm else ipb
    eff_c = good * ipb / capwin
    return {
        "eff": float(eff_c.sum()),
        "eff_wire": float((good * wireb).sum() / capwin),
        "eff_c": eff_c,
        "goodput": good * sc.payload_bytes / secs,
        "jain": jain_index(good, undefined="nan"),
        "clr": float(st[:, K.S_CDROP].sum() / max(1, st[:, K.S_CSENT].sum())),
        "flr": float(st[:, K.S_FDROP].sum() / max(1, st[:, K.S_FSENT].sum())),
    }


def _batch_metrics(sc: Scenario, smp_i, smp_g, g, nb):
    """Batch means of efficiency from the sampled cumulative series of one run."""
    t = smp_g[:, 0]
    warm = g[K.G_WARMUP]
    idx = np.nonzero(t >= warm)[0]
    if idx.size < nb + 1:
        raise ValueError(f"batches={nb} is invalid: the run has only {idx.size} samples after warm-up")
    edges = idx[np.linspace(0, idx.size - 1, nb + 1).round().astype(int)]
    good = smp_i[:, :, 0].astype(float)
    cap = smp_g[:, 2] * sc.slot_bytes
    ipb = sc.ip_packet_bytes
    wireb = sc.frame_wire_bytes if sc.feedback != "none" else ipb
    out = {"eff": [], "eff_wire": [], "eff_c": [], "goodput": [], "jain": []}
    for a, b in zip(edges[:-1], edges[1:]):
        dg = good[b] - good[a]
        dc = cap[b] - cap[a]
        secs = (t[b] - t[a]) * sc.slot_seconds
        out["eff"].append(dg.sum() * ipb / dc)
        out["eff_wire"].append(dg.sum() * wireb / dc)
        out["eff_c"].append(dg * ipb / dc)
        out["goodput"].append(dg * sc.payload_bytes / secs)
        out["jain"].append(jain_index(dg, undefined="nan"))
    return out


def simulate(scenario: Scenario, replications: int = 10, seed: int = 0, *, ci_method: str = "replications",
             batches: int = 20, level: float = 0.95, target_rel_halfwidth: float | None = None,
             max_replications: int = 1000, trace: bool = False, force_drops=(),
             workers: int = 1, progress=None) -> SimulationResult:
    """Simulate a scenario at cell level and estimate efficiency with confidence intervals.

    Parameters
    ----------
    scenario : Scenario
    replications : int, optional(default=10)
        Independent replications (with ``ci_method='batch'``: runs, whose batches are
        pooled; use 1 for classical batch means).
    seed : int, optional(default=0)
        Root of ``numpy.random.SeedSequence``; replication r uses child r.
    ci_method : {'replications', 'batch'}, optional(default='replications')
    batches : int, optional(default=20)
        Batches per run for ``ci_method='batch'``.
    level : float, optional(default=0.95)
    target_rel_halfwidth : float, optional
        If given, keep adding replications (in groups of ``replications``) until the
        efficiency half-width / mean is below it or ``max_replications`` is reached.
    max_replications : int, optional(default=1000)
    trace : bool, optional(default=False)
        Keep the first replication's sampled series (:class:`Trace`).
    force_drops : sequence of (int, int), optional
        (connection, sequence number) of frames dropped on their first transmission.
    workers : int, optional(default=1)
        Processes running replications in parallel.  Replication r always uses seed
        child r and results are combined in replication order, so the numbers do not
        depend on ``workers``.
    progress : callable, optional
        Called with 1 after each replication (e.g. ``tqdm.update``).

    Returns
    -------
    SimulationResult
    """
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario={scenario!r} is invalid: must be a Scenario")
    replications, seed, level, workers = replication_args(replications, seed, level, workers)
    check_choice("ci_method", ci_method, ("replications", "batch"))
    batches = check_int("batches", batches, 2, 100_000)
    max_replications = check_int("max_replications", max_replications, replications)
    if target_rel_halfwidth is not None:
        target_rel_halfwidth = check_real("target_rel_halfwidth", target_rel_halfwidth, 0.0, low_open=True)
    check_resources(scenario, trace)
    if not scenario_is_random(scenario) and (replications > 1 or target_rel_halfwidth is not None):
        raise ValueError(f"replications={replications} is invalid for this scenario: its capacity "
                         f"({scenario.capacity_kind}) is deterministic (one level, or a trace at a fixed "
                         "capacity_offset), so every replication is the same run; use replications=1 "
                         "(with ci_method='batch' for a confidence interval)")
    ss = np.random.SeedSequence(seed)
    samples = {"eff": [], "eff_wire": [], "eff_c": [], "goodput": [], "jain": [], "clr": [], "flr": []}
    counters = {k: 0 for k in _COUNTER_NAMES}
    cells = 0
    slots = 0
    ktime = 0.0
    tr = None
    nrep = 0
    with replication_pool(workers) as pool:
        while True:
            tasks = [(scenario, child, force_drops, trace and tr is None and i == 0)
                     for i, child in enumerate(ss.spawn(replications))]
            results = run_tasks(_replication_task, tasks, pool)
            for out, dt, g in results:  # replication order, whatever the number of workers
                st, fs, gout, meas, fbv, smp_i, smp_f, smp_g = out
                ktime += dt
                nrep += 1
                if progress is not None:
                    progress(1)
                slots += int(g[K.G_NSLOTS])
                cells += int(st[:, K.S_CSENT].sum() + st[:, K.S_CSERVED].sum() + st[:, K.S_CDROP].sum())
                for k, col in _COUNTER_NAMES.items():
                    counters[k] += int(st[:, col].sum())
                m = _rep_metrics(scenario, st, gout, g)
                samples["clr"].append(m["clr"])
                samples["flr"].append(m["flr"])
                if ci_method == "replications":
                    for k in ("eff", "eff_wire", "eff_c", "goodput", "jain"):
                        samples[k].append(m[k])
                else:
                    b = _batch_metrics(scenario, smp_i, smp_g, g, batches)
                    for k in b:
                        samples[k].extend(b[k])
                if trace and tr is None:
                    dts = scenario.slot_seconds
                    tr = Trace(time=smp_g[:, 0] * dts, queue=smp_g[:, 1].copy(), capacity=smp_g[:, 3].copy(),
                               cwnd=smp_f[:, :, 0].copy(), ssthresh=smp_f[:, :, 2].copy(),
                               source_rate=smp_f[:, :, 1].copy(), segmentation_cells=smp_i[:, :, 1].copy(),
                               delivered=smp_i[:, :, 0].copy(), measured=meas.copy(), feedback=fbv.T.copy())
            eff = Estimate.from_samples(samples["eff"], level)
            if target_rel_halfwidth is None or nrep >= max_replications:
                break
            if eff.n >= 2 and eff.half_width <= target_rel_halfwidth * abs(eff.mean):
                break
    nc = scenario.n_connections
    effc = np.array(samples["eff_c"]).reshape(-1, nc)
    gp = np.array(samples["goodput"]).reshape(-1, nc)
    return SimulationResult(
        scenario=scenario, seed=seed, replications=nrep, ci_method=ci_method,
        efficiency=eff,
        efficiency_wire=Estimate.from_samples(samples["eff_wire"], level),
        per_connection_efficiency=tuple(Estimate.from_samples(effc[:, c], level) for c in range(nc)),
        goodput_bps=tuple(Estimate.from_samples(gp[:, c], level) for c in range(nc)),
        fairness=Estimate.from_samples(samples["jain"], level),
        cell_loss_ratio=Estimate.from_samples(samples["clr"], level),
        frame_loss_ratio=Estimate.from_samples(samples["flr"], level),
        counters=counters, cells_simulated=cells, kernel_seconds=ktime,
        cells_per_second=cells / ktime if ktime > 0 else float("nan"), slots_simulated=slots, trace=tr,
    )
