"""The one replication driver of the cell-level simulator: :func:`simulate` (a
:class:`Scenario`, the core paper's single bottleneck) and :func:`simulate_network` (a
:class:`Network`).  A scenario is a network configuration (:meth:`Scenario.to_network`):
both go through :mod:`.kernel_inputs` to the numba kernels (:mod:`.kernels`) and run their
replications the same way (:func:`replication_args`, :func:`replication_pool`,
:func:`run_tasks`).

Replications are independent: replication ``r`` draws its random inputs (every port's
capacity path, then the GFR lottery key, then start offsets; :func:`.kernel_inputs.draw_replication`)
from ``numpy.random.default_rng(SeedSequence(seed).spawn(...)[r])``, so results depend only on
the seed and the replication index, never on the number of worker processes.  The kernels
draw no random numbers of their own, so a run is bit-for-bit reproducible.

Confidence intervals (95 % by default) are Student-t intervals over independent
replications, or over batch means of one long run (``simulate(..., ci_method='batch')``).
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from ..runtime.pool import process_pool  # workers end with this process (issue 17)
from .._validate import check_choice, check_int, check_real
from ..errors import ModelError
from .abr.kernel_arrays import abr_rep_summary
from .arrays import layout as L
from .capacity import CapacityPath, trace_levels
from .delay import delay_stats, replication_delay
from .kernel_inputs import (ARG_ORDER, as_network_outputs, draw_replication, fast_path_inputs, kernel_inputs,
                            port_path)
from .kernels.fast_path import simulate_kernel
from .kernels.general import simulate_network_kernel
from .network import Network
from .results import (NETWORK_COUNTERS, SCENARIO_COUNTERS, Estimate, NetResult, SimulationResult, Trace,
                      batch_metrics, network_metrics, replication_metrics)
from .scenario import Scenario

__all__ = ["simulate", "simulate_many", "simulate_network", "run_replication", "run_network_replication", "fast_path_args",
           "scenario_path", "replication_args", "replication_pool", "run_tasks", "check_resources",
           "estimated_kernel_seconds", "SimulationResult", "NetResult", "Trace", "Estimate"]


def replication_args(replications, seed, level, workers) -> tuple:
    """Validated (replications, seed, level, workers) of a replication driver."""
    return (check_int("replications", replications, 1, 100_000), check_int("seed", seed, 0),
            check_real("level", level, 0.0, 1.0, low_open=True, high_open=True),
            check_int("workers", workers, 1, 256))


def run_options(replications, seed, level, workers, ci_method, batches, max_replications,
                target_rel_halfwidth) -> tuple:
    """:func:`simulate`'s run options, validated: ``(replications, seed, level, workers, batches,
    max_replications, target_rel_halfwidth)`` (``ci_method`` checked; ``max_replications`` None: 1000, or
    ``replications`` when larger).  Also the sweep's check of its options before any point."""
    replications, seed, level, workers = replication_args(replications, seed, level, workers)
    check_choice("ci_method", ci_method, ("replications", "batch"))
    batches = check_int("batches", batches, 2, 100_000)
    if max_replications is None:    # the cap of target_rel_halfwidth; never below the count asked for
        max_replications = max(1000, replications)
    max_replications = check_int("max_replications", max_replications, replications)
    if target_rel_halfwidth is not None:
        target_rel_halfwidth = check_real("target_rel_halfwidth", target_rel_halfwidth, 0.0, low_open=True)
    return replications, seed, level, workers, batches, max_replications, target_rel_halfwidth


@contextmanager
def replication_pool(workers: int):
    """A process pool of ``workers`` processes, or None (in-process) for one worker; shut
    down on exit however the block ends (on an exception the tasks not started are
    cancelled, not run: :func:`simulate_many` may have queued many)."""
    pool = process_pool(workers) if workers > 1 else None
    try:
        yield pool
    except BaseException:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        if pool is not None:
            pool.shutdown()


def run_tasks(fn, tasks, pool=None):
    """``fn`` over ``tasks`` in task order, in ``pool`` if given: replication r always uses
    seed child r and results come back (lazily) in replication order, whatever the worker
    count."""
    return pool.map(fn, tasks) if pool is not None else map(fn, tasks)


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
            f"{MAX_SERIES_BYTES / 2**30:g} GiB: shorten duration or lengthen interval"
            + (" (TCP alone: from the command line --interval with --ci batch)" if sc.feedback == "none" else ""))


def estimated_kernel_seconds(sc: Scenario) -> float:
    """Rough kernel time of one replication (for progress reporting only, never asserted)."""
    return sc.total_slots / _SLOTS_PER_SECOND


def scenario_path(scenario: Scenario, rng: np.random.Generator, horizon: float) -> CapacityPath:
    """The bottleneck's capacity path of one replication on ``[0, horizon)`` slots (the
    two-state process, or the scenario's K-state model or trace): the draw of the network
    port that :meth:`Scenario.to_network` builds (:func:`tcpabr_model.sim.kernel_inputs.port_path`)."""
    net = scenario.to_network()
    return port_path(net, net.ports[0], rng, horizon)


def fast_path_args(scenario: Scenario, rng: np.random.Generator, force_drops=(), trace: bool = True) -> tuple:
    """The fast path's arguments for one replication of ``scenario``.

    There is one input builder for both kernels: the scenario becomes its network
    (:meth:`Scenario.to_network`), whose :func:`tcpabr_model.sim.kernel_inputs.kernel_inputs` and random draws
    (:func:`tcpabr_model.sim.kernel_inputs.draw_replication`) feed :func:`tcpabr_model.sim.kernel_inputs.fast_path_inputs`, as
    for :func:`~tcpabr_model.sim.simulate_network`.  With ``trace=False`` the series are
    sampled coarsely (about 4000 points, enough for batch means).
    """
    net = scenario.to_network()
    kin = kernel_inputs(net, force_drops)
    draw_replication(net, kin, rng)
    # the sampled series feed traces (every interval s) and batch means (about 4000 points
    # suffice); a multiple of s, so sampling adds no stopping points and results do not depend on it
    meas = int(kin["gpar"][L.G_MEAS])
    nslots = int(kin["gpar"][L.G_NSLOTS])
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
    out, dt = _run_fast(args)
    return out, dt, (g, gf, cp, cf, ptimes, int(g[L.G_INITSTATE]))


def _run_fast(args):
    """The fast path on ``args`` (its delay arrays, the last three, filled in place):
    (outputs, kernel wall seconds); raises on a ring overflow."""
    t0 = time.perf_counter()
    out = simulate_kernel(*args)
    dt = time.perf_counter() - t0
    err = int(out[2][L.O_ERR])
    if err:
        what = {1: "segmentation queue", 2: "ACK ring", 3: "feedback ring"}.get(err, "internal")
        raise ModelError(f"simulation aborted: {what} overflow (the {what} grew without bound; "
                         "check the source rate, RTO and window settings)")
    return out, dt


def _replication_task(task):
    """One replication from a picklable (scenario, SeedSequence child, drops, trace) task:
    (kernel outputs, kernel seconds, gpar, per-replication delays of :mod:`.delay`)."""
    scenario, child, force_drops, trace = task
    args = fast_path_args(scenario, np.random.default_rng(child), force_drops, trace)
    out, dt = _run_fast(args)
    g, gout = args[0], out[2]
    dly = replication_delay(args[-3:], scenario.slot_seconds, int(g[L.G_NSLOTS] - g[L.G_WARMUP]),
                            [gout[L.O_QINT] + gout[L.O_SERVEDW]])
    return out, dt, g, dly


def simulate(scenario: Scenario, replications: int = 10, seed: int = 0, *, ci_method: str = "replications",
             batches: int = 20, level: float = 0.95, target_rel_halfwidth: float | None = None,
             max_replications: int | None = None, trace: bool = False, force_drops=(),
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
    max_replications : int, optional(default=None: 1000, or ``replications`` when that is larger)
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
    replications, seed, level, workers, batches, max_replications, target_rel_halfwidth = run_options(
        replications, seed, level, workers, ci_method, batches, max_replications, target_rel_halfwidth)
    _check_run(scenario, replications, trace, target_rel_halfwidth is not None)
    ss = np.random.SeedSequence(seed)
    tally = _Tally(scenario, ci_method, batches, trace)
    with replication_pool(workers) as pool:
        while True:
            tasks = [(scenario, child, force_drops, trace and tally.trace is None and i == 0)
                     for i, child in enumerate(ss.spawn(replications))]
            for res in run_tasks(_replication_task, tasks, pool):  # replication order, whatever the workers
                tally.add(*res)
                if progress is not None:
                    progress(1)
            eff = Estimate.from_samples(tally.samples["eff"], level, _eff_limits(scenario))
            if target_rel_halfwidth is None or tally.nrep >= max_replications:
                break
            if target_reached(eff, target_rel_halfwidth):
                break
    return tally.result(seed, level, eff)


def _eff_limits(sc: Scenario) -> tuple:
    """The physical range of Section V's efficiency: 0 to IP bytes / wire bytes of a frame
    over ATM (the cell tax), to 1 for TCP alone."""
    return (0.0, sc.overhead_factor if sc.feedback != "none" else 1.0)


def target_reached(eff: Estimate, target_rel_halfwidth: float) -> bool:
    """:func:`simulate`'s stopping rule: the efficiency's half-width at most ``target_rel_halfwidth``
    times its mean (two replications at least)."""
    return eff.n >= 2 and eff.half_width <= target_rel_halfwidth * abs(eff.mean)


def _check_run(scenario: Scenario, replications: int, trace: bool, adaptive: bool) -> None:
    """Refuse a run :func:`simulate` cannot make: one that would exhaust memory
    (:func:`check_resources`), or several replications of a deterministic scenario."""
    check_resources(scenario, trace)
    if not scenario_is_random(scenario) and (replications > 1 or adaptive):
        raise ValueError(f"replications={replications} is invalid for this scenario: its capacity "
                         f"({scenario.capacity_kind}) is deterministic (one level, or a trace at a fixed "
                         "capacity_offset), so every replication is the same run; use replications=1 "
                         "(with ci_method='batch' for a confidence interval)")


class _Tally:
    """The replications of one scenario summed in replication order into a
    :class:`SimulationResult`: the one place :func:`simulate` and :func:`simulate_many`
    combine them (so both give the same numbers for the same seed)."""

    def __init__(self, scenario: Scenario, ci_method: str, batches: int, keep_trace: bool):
        self.scenario, self.ci_method, self.batches, self.keep_trace = scenario, ci_method, batches, keep_trace
        self.samples = {"eff": [], "eff_wire": [], "eff_c": [], "goodput": [], "jain": [], "clr": [], "flr": []}
        self.counters = {k: 0 for k in SCENARIO_COUNTERS}
        self.cells = self.slots = self.nrep = 0
        self.ktime = 0.0
        self.trace = None
        self.delays = []

    def add(self, out, dt, g, dly) -> None:
        """One replication's kernel outputs, kernel seconds, gpar and delays (:func:`_replication_task`)."""
        sc, samples = self.scenario, self.samples
        st, fs, gout, meas, fbv, smp_i, smp_f, smp_g = out
        self.delays.append(dly)
        self.ktime += dt
        self.nrep += 1
        self.slots += int(g[L.G_NSLOTS])
        self.cells += int(st[:, L.S_CSENT].sum() + st[:, L.S_CSERVED].sum() + st[:, L.S_CDROP].sum())
        for k, col in SCENARIO_COUNTERS.items():
            self.counters[k] += int(st[:, col].sum())
        m = replication_metrics(sc, st, gout, g)
        samples["clr"].append(m["clr"])
        samples["flr"].append(m["flr"])
        if self.ci_method == "replications":
            for k in ("eff", "eff_wire", "eff_c", "goodput", "jain"):
                samples[k].append(m[k])
        else:
            b = batch_metrics(sc, smp_i, smp_g, g, self.batches)
            for k in b:
                samples[k].extend(b[k])
        if self.keep_trace and self.trace is None:
            dts = sc.slot_seconds
            self.trace = Trace(time=smp_g[:, 0] * dts, queue=smp_g[:, 1].copy(), capacity=smp_g[:, 3].copy(),
                               cwnd=smp_f[:, :, 0].copy(), ssthresh=smp_f[:, :, 2].copy(),
                               source_rate=smp_f[:, :, 1].copy(), segmentation_cells=smp_i[:, :, 1].copy(),
                               delivered=smp_i[:, :, 0].copy(), measured=meas.copy(), feedback=fbv.T.copy())

    def result(self, seed: int, level: float, eff: Estimate | None = None) -> SimulationResult:
        """The :class:`SimulationResult` of the replications added (``eff``: the efficiency's
        Estimate if already computed)."""
        sc, samples, ktime = self.scenario, self.samples, self.ktime
        lim = _eff_limits(sc)
        if eff is None:
            eff = Estimate.from_samples(samples["eff"], level, lim)
        nc = sc.n_connections
        effc = np.array(samples["eff_c"]).reshape(-1, nc)
        gp = np.array(samples["goodput"]).reshape(-1, nc)
        return SimulationResult(
            scenario=sc, seed=seed, replications=self.nrep, ci_method=self.ci_method,
            efficiency=eff,
            efficiency_wire=Estimate.from_samples(samples["eff_wire"], level, (0.0, 1.0)),
            per_connection_efficiency=tuple(Estimate.from_samples(effc[:, c], level, lim) for c in range(nc)),
            goodput_bps=tuple(Estimate.from_samples(gp[:, c], level, (0.0, None)) for c in range(nc)),
            fairness=Estimate.from_samples(samples["jain"], level, (1.0 / nc, 1.0)),
            cell_loss_ratio=Estimate.from_samples(samples["clr"], level, (0.0, 1.0)),
            frame_loss_ratio=Estimate.from_samples(samples["flr"], level, (0.0, 1.0)),
            counters=self.counters, cells_simulated=self.cells, kernel_seconds=ktime,
            cells_per_second=self.cells / ktime if ktime > 0 else float("nan"), slots_simulated=self.slots,
            trace=self.trace, delay=delay_stats(self.delays, sc.slot_seconds, level),
        )


def simulate_many(scenarios, replications: int = 10, seed: int = 0, *, level: float = 0.95, pool=None):
    """:func:`simulate` of each of ``scenarios`` with the same ``replications`` and ``seed``,
    every replication of every scenario submitted at once to ``pool`` (a
    :func:`replication_pool`; None: in this process, one at a time).

    The numbers are :func:`simulate`'s, bit for bit (each replication is the same task,
    seed child r of ``SeedSequence(seed)`` for every scenario, combined in replication order
    by the same code), with ``ci_method='replications'``, no trace and no forced drops.  What
    it saves is the pool's idle time: ``workers`` processes run the replications of all
    the scenarios, not of one scenario at a time (docs/design.md "Time").

    Parameters
    ----------
    scenarios : sequence of Scenario
    replications, seed, level
        As in :func:`simulate`.
    pool : concurrent.futures.Executor, optional
        The tasks are submitted when this function is called, so the caller can do other
        work while the pool runs them.

    Returns
    -------
    iterator of SimulationResult
        One per scenario, in order; each is complete when it is yielded.
    """
    scenarios = tuple(scenarios)
    if not scenarios or not all(isinstance(s, Scenario) for s in scenarios):
        raise ValueError(f"scenarios={scenarios!r} is invalid: must be a non-empty sequence of Scenario")
    replications, seed, level, _ = replication_args(replications, seed, level, 1)
    for sc in scenarios:
        _check_run(sc, replications, False, False)
    tasks = [(sc, child, (), False) for sc in scenarios for child in np.random.SeedSequence(seed).spawn(replications)]
    return _collect(scenarios, run_tasks(_replication_task, tasks, pool), replications, seed, level)


def _collect(scenarios, results, replications: int, seed: int, level: float):
    """:func:`simulate_many`'s results, ``replications`` task results per scenario, in order."""
    it = iter(results)
    for sc in scenarios:
        tally = _Tally(sc, "replications", 20, False)
        for _ in range(replications):
            tally.add(*next(it))
        yield tally.result(seed, level)


def run_network_replication(net: Network, rng: np.random.Generator, force_drops=(), kernel: str = "general"):
    """One replication: (kernel outputs, kernel wall seconds, inputs dict).

    ``kernel='auto'`` runs the single-bottleneck fast path when the network qualifies
    (:func:`fast_path_inputs`; same random draws, same counters, outputs in the general
    kernel's layout), else the general kernel; ``'general'`` always the general kernel.
    """
    if kernel not in ("general", "auto"):
        raise ValueError(f"kernel={kernel!r} is invalid: must be 'general' or 'auto'")
    kin = kernel_inputs(net, force_drops)
    draw_replication(net, kin, rng)
    fast = fast_path_inputs(net, kin) if kernel == "auto" else None
    t0 = time.perf_counter()
    if fast is not None:
        out = as_network_outputs(net, simulate_kernel(*fast))
    else:
        out = simulate_network_kernel(*(kin[k] for k in ARG_ORDER))
    dt = time.perf_counter() - t0
    err = int(out[6][L.O_ERR])
    if err:
        what = L.ERR_NAMES.get(err, "internal")
        raise ModelError(f"network simulation aborted: {what} overflow (check rates, RTO and window settings)")
    return out, dt, kin


def _network_task(task):
    net, child, force, kernel = task
    return run_network_replication(net, np.random.default_rng(child), force, kernel)


def simulate_network(network: Network, replications: int = 5, seed: int = 0, *, level: float = 0.95,
                     workers: int = 1, force_drops=(), kernel: str = "auto") -> NetResult:
    """Simulate a network at cell level; estimates with confidence intervals.

    Parameters
    ----------
    network : Network
    replications : int, optional(default=5)
        Independent replications (each with its own warm-up).
    seed : int, optional(default=0)
        Root of ``numpy.random.SeedSequence``; replication r uses child r.
    level : float, optional(default=0.95)
    workers : int, optional(default=1)
        Processes running replications; the numbers do not depend on it.
    force_drops : sequence of (int, int), optional
        (connection, segment) frames dropped at their first port on first transmission.
    kernel : {'auto', 'general'}, optional(default='auto')
        'auto' simulates a network the single-bottleneck fast path models exactly (one
        port, no VBR, no ERICA, ...: :func:`fast_path_inputs`) with the fast path, about
        twice as fast, and every other network with the general kernel; the results are
        the same either way (``tests/test_net_dispatch.py``).  'general' forces the general
        kernel.

    Returns
    -------
    NetResult
    """
    if not isinstance(network, Network):
        raise ValueError(f"network={network!r} is invalid: must be a Network")
    replications, seed, level, workers = replication_args(replications, seed, level, workers)
    if replications > 1 and not network.is_random:
        raise ValueError(f"replications={replications} is invalid for network {network.name or ''!r}: it has no "
                         "randomness (no capacity process, no GFR lottery, start_jitter=0), so every replication "
                         "is the same run and a confidence interval cannot exist; use replications=1, or give "
                         "the connections random start times with start_jitter > 0 (seconds)")
    kernel_inputs(network, force_drops)  # validate before spawning work
    ss = np.random.SeedSequence(seed)
    if kernel not in ("general", "auto"):
        raise ValueError(f"kernel={kernel!r} is invalid: must be 'auto' or 'general'")
    tasks = [(network, child, tuple(force_drops), kernel) for child in ss.spawn(replications)]
    with replication_pool(workers) as pool:
        results = list(run_tasks(_network_task, tasks, pool))
    samples = {}
    delays = []
    counters = {k: 0 for k in NETWORK_COUNTERS}
    counters.update({"vbr_cells_sent": 0, "vbr_cells_dropped": 0, "frames_corrupted_at_destination": 0})
    cells = 0
    slots = 0
    ktime = 0.0
    qmax = np.zeros(len(network.ports), dtype=np.int64)
    abr_reps = []
    nd = len(network.vcs)
    for out, dt, kin in results:
        st, vst, pst = out[0], out[2], out[4]
        ktime += dt
        slots += int(kin["gpar"][L.G_NSLOTS])
        cells += int(vst[:, L.V_CSENT].sum() + pst[:, L.PS_SERVED0:L.PS_SERVED0 + 3].sum()
                     + pst[:, L.PS_DROP0:L.PS_DROP0 + 3].sum())
        for k, col in NETWORK_COUNTERS.items():
            counters[k] += int(st[:, col].sum())
        counters["vbr_cells_sent"] += int(vst[nd:, L.V_VBRSENT].sum())
        counters["vbr_cells_dropped"] += int(vst[nd:, L.V_CDROP].sum())
        counters["frames_corrupted_at_destination"] += int(vst[:nd, L.V_FCORR].sum())
        m = network_metrics(network, out, kin)
        pst, pfs = out[4], out[5]
        delays.append(replication_delay(kin["delay"], network.slot_seconds,
                                        int(kin["gpar"][L.G_NSLOTS] - kin["gpar"][L.G_WARMUP]),
                                        pfs[:, L.PFS_QINT] + pst[:, L.PS_SERVEDW0:L.PS_SERVEDW0 + 3].sum(axis=1)))
        abr_reps.append(abr_rep_summary(network, kin, out))
        qmax = np.maximum(qmax, m.pop("qmax"))
        for k, v in m.items():
            samples.setdefault(k, []).append(v)

    def est(x, limits=(0.0, 1.0)):     # efficiencies, fairness indices and loss ratios: in [0, 1]
        return Estimate.from_samples(x, level, limits)

    def cols(k):     # goodputs, ratios and occupancies: >= 0
        a = np.array(samples[k])
        return tuple(est(a[:, i], (0.0, None)) for i in range(a.shape[1]))

    return NetResult(
        network=network, seed=seed, replications=replications,
        efficiency=est(samples["eff"]), efficiency_ip=est(samples["eff_ip"]),
        fairness=est(samples["jain"]), vc_fairness=est(samples["vc_jain"]),
        goodput_bps=cols("goodput"), vc_goodput_bps=cols("vc_goodput"),
        share_ratio=cols("ratio") if "ratio" in samples else None,
        cell_loss_ratio=est(samples["clr"]), frame_loss_ratio=est(samples["flr"]),
        queue_max=tuple(int(x) for x in qmax), queue_mean=cols("qmean"), counters=counters,
        cells_simulated=cells, kernel_seconds=ktime,
        cells_per_second=cells / ktime if ktime > 0 else float("nan"), slots_simulated=slots,
        abr=tuple(a for a in abr_reps if a),
        samples={k: np.array(v) for k, v in samples.items()},
        delay=delay_stats(delays, network.slot_seconds, level))
