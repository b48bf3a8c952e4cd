"""Built-in sweep methods: one function per kind of point, ``f(params, seed, **options) -> dict``.

``analysis``
    Markov renewal bounds (:func:`tcpabr_model.markov.analyze`, seed 004 Sec. III).
``simulation``
    Cell-level Monte Carlo (:func:`tcpabr_model.sim.simulate`, seed 004 Secs. V-VII).
``effective_capacity``
    Closed-form eq. (23) of the two-state chain (seed 004 Sec. IV).
``effcap_design``
    The EFFCAP M, N design rule (seed 004 Sec. VI).
``network``
    The network (topology) simulator on a named preset (:mod:`tcpabr_model.sim`, seeds
    000-003), e.g. the seed 003 backbone with ERICA+, INSTCAP or EFFCAP rate allocation.

The registry :data:`METHODS` is open: :func:`register_method` adds a method.  A method
must be a module-level function (so that worker processes can import it) and return a
dict of JSON-friendly values (numbers, strings, booleans, None, lists).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

__all__ = ["METHODS", "register_method", "method_name", "analysis_point", "simulation_point",
           "effective_capacity_point", "effcap_design_point", "network_point", "SIMULATION_KEYS", "SIMULATION_DERIVED",
           "check_point_keys"]


def _split_unknown(params: dict, allowed, what: str) -> None:
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"{unknown[0]}={params[unknown[0]]!r} is invalid: not a parameter of {what} "
                         f"(allowed: {', '.join(sorted(allowed))})")


def _f(x) -> float:
    """A float column's value; NaN where the result has none (e.g. a delay the analysis does not give)."""
    return float("nan") if x is None else float(x)


def check_point_keys(name: str, params: dict) -> None:
    """``ValueError`` naming a key of ``params`` that the built-in method ``name`` does not take
    (the error its point would fail with), without reading files or building anything; other
    methods: nothing to check.  For ``tcpabr sweep``, before the first point."""
    p = dict(params)
    if name == "analysis":
        from ..markov import Scenario

        _split_unknown(p, [f.name for f in dataclasses.fields(Scenario)] + ["solver"],
                       "the analysis (tcpabr_model.markov.Scenario, or solver)")
    elif name == "simulation":
        _simulation_keys({k: v for k, v in p.items() if k not in SIMULATION_KEYS})
    elif name in ("effective_capacity", "effcap_design", "network"):
        keys = {"effective_capacity": ("p01", "p10", "c0", "c1", "delta"),
                "effcap_design": ("delta", "s", "k", "convention"), "network": NETWORK_KEYS}[name]
        _split_unknown(p, keys, name)


def check_point_values(name: str, params: dict) -> None:
    """``ValueError`` where the built-in method ``name`` would refuse the point's values before
    computing anything: the analysis' and the simulation's scenarios are built (files read, nothing
    solved or simulated); other methods: nothing to check.  For ``tcpabr sweep``, which refuses a grid
    whose every point is invalid (a typo in a value) in one line instead of a table of error rows."""
    p = dict(params)
    if name == "analysis":
        p.pop("solver", None)
        _analysis_scenario(p)
    elif name == "simulation":
        build_sim_scenario({k: v for k, v in p.items() if k not in SIMULATION_KEYS})


def check_option_values(name: str, options: dict, flag: str = "method_options") -> None:
    """``ValueError`` naming an option of the built-in method ``name`` whose value its run would refuse
    (the analysis' ``solver`` and ``tol``; the simulation's :data:`SIMULATION_KEYS`), before any point:
    a bad value otherwise failed every point, once per point.  Other methods: nothing to check."""
    from .._validate import check_choice, check_real

    try:
        if name == "analysis":
            from ..markov.solvers import METHODS

            if "solver" in options:
                check_choice("solver", options["solver"], METHODS)
            if options.get("tol") is not None:
                check_real("tol", options["tol"], 0.0, 1.0, low_open=True)   # analyze's own check, under this name
        elif name == "simulation":   # simulate's own checks, on the options simulation_point would pass it
            from ..sim.driver import run_options

            opts = _simulation_options({}, dict(options))
            run_options(opts["replications"], 0, opts["level"], 1, opts["ci_method"], opts["batches"],
                        opts["max_replications"], opts.get("target_rel_halfwidth"))
    except ValueError as e:
        raise ValueError(f"{flag} {e}") from None


def _simulation_keys(p: dict) -> None:
    """The key checks of :func:`build_sim_scenario`, alone (a bad ``normalized`` value is left
    to the point, which says so when it runs)."""
    normalized = p.pop("normalized", None)
    if normalized is not None and not isinstance(normalized, bool):
        return
    _check_sim_keys(p, any(k in p for k in ("delta", "bmax", "psi")) if normalized is None else normalized)


def _check_sim_keys(p: dict, normalized: bool) -> None:
    """``ValueError`` naming a key of the simulation point ``p`` (without ``normalized``) that
    :func:`build_sim_scenario` does not take; reads nothing."""
    from ..sim import Scenario, TcpConfig

    if "tcp" in p:
        raise ValueError("tcp is invalid: give TCP settings as tcp_<field> keys (e.g. tcp_wmax, tcp_variant)")
    _split_unknown({k: v for k, v in p.items() if k.startswith("tcp_")},
                   ["tcp_" + f.name for f in dataclasses.fields(TcpConfig)], "the simulator's TcpConfig")
    rest = {("capacity" if k == "capacity_trace" else k): v for k, v in p.items() if not k.startswith("tcp_")}
    sc_fields = [f.name for f in dataclasses.fields(Scenario) if f.name != "tcp"]
    if normalized:
        allowed = set(sc_fields) | {"delta", "bmax", "psi", "wmax", "duration_units", "warmup_units"}
        _split_unknown(rest, allowed - {"rtt", "tau", "buffer_packets"}, "Scenario.from_normalized")
    else:
        _split_unknown(rest, sc_fields, "the simulator's Scenario (physical units; set normalized=true "
                                        "for delta/bmax/psi)")


# ---- analysis -----------------------------------------------------------------------
def _analysis_scenario(p: dict):
    """The :class:`tcpabr_model.markov.Scenario` of an analysis point (``solver`` removed)."""
    from ..markov import Scenario

    _split_unknown(p, [f.name for f in dataclasses.fields(Scenario)], "the analysis (tcpabr_model.markov.Scenario)")
    if isinstance(p.get("capacity"), str):   # a model file written by capacity.save_model
        from ..capacity import load_model
        p = {**p, "capacity": load_model(p["capacity"])}
    return Scenario(**p)


def analysis_point(params: dict, seed: int, *, solver: str = "structured", tol: float | None = None) -> dict:
    """Markov renewal bounds of one :class:`tcpabr_model.markov.Scenario` (seed 004 Sec. III).

    Parameters
    ----------
    params : dict
        :class:`~tcpabr_model.markov.Scenario` fields (``delta``, ``bmax``, ``psi``,
        ``rate_ratio``, ``wmax``, ``feedback``, ``source_rate``, ``max_states``,
        ``capacity``: a K-level model file written by
        :func:`tcpabr_model.capacity.save_model`, in place of ``psi``/``rate_ratio``) and
        optionally ``solver`` (the ``method`` of :func:`~tcpabr_model.markov.analyze`),
        which overrides the option of the same name.
    seed : int
        Unused (the analysis is deterministic).
    solver : str, optional(default='structured')
    tol : float, optional
        Residual tolerance of the stationary solve (default: the solver's).

    Returns
    -------
    dict
        ``optimistic``, ``conservative``, ``prediction``, ``optimistic_eq18`` (efficiencies,
        throughput / mean capacity, packets incl. TCP/IP headers, no ATM cell tax);
        ``mean_queue``, ``mean_source_buffer`` (time-average packets in the bottleneck and the
        segmentation buffer) and ``mean_queueing_delay``, ``mean_source_delay`` (their mean delays
        by Little's law, time units; docs/model.md sec. 13);
        ``throughput_optimistic``, ``throughput_conservative``, ``mean_capacity``
        (packets per time unit); ``loss_probability`` (per embedded step);
        ``mean_cycle_length`` (units of Delta); ``n_states``, ``nnz``; ``residual``
        (||pi P - pi||_1); ``solver`` (the solver used).
    """
    from ..markov import analyze
    from ..markov.solvers import DEFAULT_TOL

    p = dict(params)
    solver = p.pop("solver", solver)
    r = analyze(_analysis_scenario(p), method=solver, tol=DEFAULT_TOL if tol is None else tol)
    return {
        "optimistic": _f(r.optimistic),
        "conservative": _f(r.conservative),
        "prediction": _f(r.prediction),
        "optimistic_eq18": _f(r.optimistic_eq18),
        "mean_queue": _f(r.mean_queue),
        "mean_source_buffer": _f(r.mean_source_buffer),
        "mean_queueing_delay": _f(r.mean_queueing_delay),
        "mean_source_delay": _f(r.mean_source_delay),
        "throughput_optimistic": _f(r.throughput_optimistic),
        "throughput_conservative": _f(r.throughput_conservative),
        "mean_capacity": _f(r.mean_capacity),
        "loss_probability": _f(r.loss_probability),
        "mean_cycle_length": _f(r.mean_cycle_length),
        "n_states": int(r.n_states),
        "nnz": int(r.nnz),
        "residual": _f(r.residual),
        "solver": str(r.method),
    }


# ---- simulation ---------------------------------------------------------------------
#: Keys of a simulation point that are arguments of :func:`tcpabr_model.sim.simulate`,
#: not scenario fields (the same names are accepted as method options).
SIMULATION_KEYS = ("replications", "target_rel_halfwidth", "max_replications", "ci_method", "batches",
                   "level")
_NORMALIZED_KEYS = ("delta", "bmax", "psi", "duration_units", "warmup_units")
#: columns of a simulation row computed from the built scenario, whatever spelling a point used
#: (``psi`` is also a parameter of normalised points)
SIMULATION_DERIVED = ("psi", "overhead_factor")


def build_sim_scenario(params: dict):
    """The :class:`tcpabr_model.sim.Scenario` of a simulation point (see :func:`simulation_point`)."""
    from ..sim import Scenario, TcpConfig

    p = dict(params)
    normalized = p.pop("normalized", None)
    if normalized is not None and not isinstance(normalized, bool):
        raise ValueError(f"normalized={normalized!r} is invalid: must be true or false")
    if normalized is None:
        normalized = any(k in p for k in ("delta", "bmax", "psi"))
    if "capacity" in p and "capacity_trace" in p:
        raise ValueError("capacity/capacity_trace is invalid: give one of them (a model file or a trace)")
    _check_sim_keys(p, normalized)
    if "capacity_trace" in p:     # issue 15: a Mahimahi trace replayed as the bottleneck's service
        from ..capacity import read_trace
        p["capacity"] = read_trace(p.pop("capacity_trace"))
    elif isinstance(p.get("capacity"), str):   # a model file written by capacity.save_model
        from ..capacity import load_model
        p["capacity"] = load_model(p["capacity"])
    tcp_kw = {k[4:]: p.pop(k) for k in list(p) if k.startswith("tcp_")}
    p = {k: tuple(v) if isinstance(v, list) and k != "delta" else v for k, v in p.items()}
    if normalized:
        if tcp_kw:
            if "wmax" in p:
                tcp_kw.setdefault("wmax", p.pop("wmax"))
            p["tcp"] = TcpConfig(**tcp_kw)
        return Scenario.from_normalized(**p)
    if tcp_kw:
        p["tcp"] = TcpConfig(**tcp_kw)
    return Scenario(**p)


def _simulation_options(p: dict, given: dict) -> dict:
    """The options :func:`simulation_point` passes to ``simulate``: ``given`` (its keywords; those left out
    take its defaults) overridden by the :data:`SIMULATION_KEYS` of the point ``p``, which are taken out of
    ``p``; no ``target_rel_halfwidth`` where None, and the default ``max_replications`` raised to a larger
    ``replications``."""
    import inspect

    opts = dict(given)
    if any(k not in opts for k in SIMULATION_KEYS):     # simulation_point gives them all; a check may not
        opts = {**{k: v.default for k, v in inspect.signature(simulation_point).parameters.items()
                   if k in SIMULATION_KEYS}, **opts}
    explicit = "max_replications" in p
    for k in SIMULATION_KEYS:
        if k in p:
            opts[k] = p.pop(k)
    if opts["target_rel_halfwidth"] is None:
        opts.pop("target_rel_halfwidth")
    if not explicit and isinstance(opts["replications"], int) and opts["replications"] > opts["max_replications"]:
        opts["max_replications"] = opts["replications"]  # default cap below the asked count
    return opts


def simulation_point(params: dict, seed: int, *, replications: int = 10,
                     target_rel_halfwidth: float | None = None, max_replications: int = 1000,
                     ci_method: str = "replications", batches: int = 20, level: float = 0.95) -> dict:
    """Cell-level simulation of one scenario (seed 004 Secs. V-VII).

    Parameters
    ----------
    params : dict
        :class:`tcpabr_model.sim.Scenario` fields.  With ``normalized=True``, or when any
        of ``delta``/``bmax``/``psi`` is present, the point goes through
        :meth:`Scenario.from_normalized` (the analysis' units; ``duration_units``,
        ``warmup_units`` and ``wmax`` accepted); otherwise ``Scenario(**params)``
        (physical units).  ``tcp_<field>`` keys build the :class:`TcpConfig`
        (``tcp_wmax``, ``tcp_variant``, ...); lists are accepted for tuple fields
        (``rtt``, ``m``, ``n``, ``share``, ``feedback_delay``, ``mcr``) and for ``delta``.
        ``capacity`` (a model file path) or ``capacity_trace`` (a Mahimahi trace path)
        replace the two-state process (``docs/simulator.md``).
        The keys of :data:`SIMULATION_KEYS` (``replications`` etc.) go to
        :func:`~tcpabr_model.sim.simulate` and override the options of the same name.
    seed : int
        Root seed of the replications (the sweep's per-point seed).
    replications, target_rel_halfwidth, max_replications, ci_method, batches, level
        As in :func:`tcpabr_model.sim.simulate` (defaults: 10 replications, 95 %).

    Returns
    -------
    dict
        ``efficiency`` (goodput / mean capacity, ATM cell tax charged) with
        ``efficiency_hw`` (half-width of the confidence interval at ``level``),
        ``efficiency_lo``, ``efficiency_hi``; ``efficiency_wire`` (IP bytes) and
        ``efficiency_wire_hw``; ``fairness`` (Jain index) and ``fairness_hw``; ``clr``,
        ``clr_hw`` (cell loss ratio), ``flr``, ``flr_hw`` (frame loss ratio);
        ``replications`` (run); ``n_connections``; per connection i:
        ``eff_conn{i}``, ``eff_conn{i}_hw``, ``goodput_conn{i}_bps`` (TCP/IP bytes per
        second delivered in order); ``psi`` (tau / max rtt) and ``overhead_factor`` of
        the built scenario; the delay and occupancy columns of
        :meth:`tcpabr_model.sim.delay.DelayStats.columns` (seconds; frames, cells).
    """
    from ..sim import simulate

    p = dict(params)
    opts = _simulation_options(p, {"replications": replications, "target_rel_halfwidth": target_rel_halfwidth,
                                   "max_replications": max_replications, "ci_method": ci_method,
                                   "batches": batches, "level": level})
    sc = build_sim_scenario(p)
    res = simulate(sc, seed=seed, **opts)

    def hw(e):
        return _f(e.half_width)

    out = {
        "efficiency": _f(res.efficiency.mean),
        "efficiency_hw": hw(res.efficiency),
        "efficiency_lo": _f(res.efficiency.low),
        "efficiency_hi": _f(res.efficiency.high),
        "efficiency_wire": _f(res.efficiency_wire.mean),
        "efficiency_wire_hw": hw(res.efficiency_wire),
        "fairness": _f(res.fairness.mean),
        "fairness_hw": hw(res.fairness),
        "clr": _f(res.cell_loss_ratio.mean),
        "clr_hw": hw(res.cell_loss_ratio),
        "flr": _f(res.frame_loss_ratio.mean),
        "flr_hw": hw(res.frame_loss_ratio),
        "replications": int(res.replications),
        "n_connections": int(sc.n_connections),
    }
    for i, (e, g) in enumerate(zip(res.per_connection_efficiency, res.goodput_bps)):
        out[f"eff_conn{i}"] = _f(e.mean)
        out[f"eff_conn{i}_hw"] = hw(e)
        out[f"goodput_conn{i}_bps"] = _f(g.mean)
    out.update({k: _f(getattr(sc, k)) for k in SIMULATION_DERIVED})
    out.update(res.delay.columns())     # per delivered segment, seconds (docs/simulator.md, "Delay")
    return out


# ---- closed forms -------------------------------------------------------------------
def effective_capacity_point(params: dict, seed: int) -> dict:
    """Closed-form effective capacity of the two-state chain (seed 004 eq. 23).

    ``params``: ``p01``, ``p10`` (switch probabilities per slot, in (0, 1]), ``c0``,
    ``c1`` (packets per slot, >= 0), ``delta`` (>= 0; ``inf`` allowed).  Returns
    ``effective_capacity`` in packets per slot.  ``seed`` is unused.
    """
    from ..closed_forms import effective_capacity_two_state

    need = ("p01", "p10", "c0", "c1", "delta")
    _split_unknown(params, need, "effective_capacity")
    missing = [k for k in need if k not in params]
    if missing:
        raise ValueError(f"{missing[0]}=None is invalid: effective_capacity needs {', '.join(need)}")
    d = params["delta"]
    if isinstance(d, str) and d.lower() in ("inf", "infinity"):
        d = math.inf
    val = effective_capacity_two_state(params["p01"], params["p10"], params["c0"], params["c1"], d)
    return {"effective_capacity": _f(val)}


def effcap_design_point(params: dict, seed: int) -> dict:
    """EFFCAP design rule (seed 004 Sec. VI): ``delta``, ``s`` (same time unit), ``k``
    (memory in RTTs, default 8), optional ``convention`` -> ``m`` (samples per average,
    ceil(delta/s)) and ``n`` (number of averages).  ``seed`` is unused."""
    from ..closed_forms import effcap_design

    _split_unknown(params, ("delta", "s", "k", "convention"), "effcap_design")
    for k in ("delta", "s"):
        if k not in params:
            raise ValueError(f"{k}=None is invalid: effcap_design needs delta and s")
    d = effcap_design(params["delta"], params["s"], params.get("k", 8),
                      convention=params.get("convention", "memory"))
    return {"m": int(d.M), "n": int(d.N)}


# ---- network simulator --------------------------------------------------------------
NETWORK_KEYS = ("preset", "rate_allocation", "duration", "warmup", "replications")


def network_point(params: dict, seed: int, *, replications: int = 5) -> dict:
    """The network simulator (:func:`tcpabr_model.sim.simulate_network`) on a named preset.

    Parameters
    ----------
    params : dict
        ``preset`` (required: a name from ``tcpabr presets``); optional ``rate_allocation``
        (``erica``, ``instcap`` or ``effcap``; seed 003 ABR backbone presets only: the same
        backbone with that rate computation), ``duration`` and ``warmup`` (simulated
        seconds, replacing the preset's) and ``replications`` (overrides the option).
    seed : int
        Root seed of the replications (the sweep's per-point seed).
    replications : int, optional(default=5)

    Returns
    -------
    dict
        ``efficiency`` (seed 000 Sec. 4.2: TCP payload goodput / (payload fraction x
        capacity left by VBR)) and ``efficiency_hw``; ``efficiency_ip`` (IP bytes / wire
        capacity); ``fairness`` (Jain, per connection) with ``fairness_hw``;
        ``vc_fairness``; ``goodput_mbps`` (sum of the per-connection payload goodputs,
        Mbit/s) with ``goodput_mbps_hw`` (half-width from the per-replication sums);
        ``clr``, ``flr`` (seed 001); ``queue_max_cells`` and ``queue_mean_cells`` of the
        bottleneck port; with ABR RM-cell VCs also ``max_switch_queue_cells``,
        ``max_switch_queue_rtt``, ``diverges`` (any replication; ``docs/abr_erica.md``),
        ``max_source_queue_cells``, ``mean_source_queue_cells``,
        ``source_drop_cells`` (sum over VCs, mean over replications); the delay and
        occupancy columns of :meth:`tcpabr_model.sim.delay.DelayStats.columns`, the port
        ones at the bottleneck.  Half-widths are 95 % Student-t over replications (NaN with one replication).
    """
    import numpy as np

    from ..sim import simulate_network
    from ..sim.presets.catalogue import preset
    from ..sim.presets.abr_backbone import abr_presets
    from ..stats import Estimate

    _split_unknown(params, NETWORK_KEYS, "network")
    if "preset" not in params:
        raise ValueError("preset=None is invalid: the network method needs a preset name (see `tcpabr presets`)")
    name = params["preset"]
    reps = int(params.get("replications", replications))
    pol = params.get("rate_allocation")
    if pol is not None:
        cases = abr_presets()
        if name not in cases:
            raise ValueError(f"rate_allocation={pol!r} is invalid for preset={name!r}: only the seed 003 ABR "
                             "backbone presets (abr_*) take a rate_allocation")
        net = cases[name].with_rate_allocation(pol).to_network()
    else:
        net = preset(name).network
    over = {k: float(params[k]) for k in ("duration", "warmup") if k in params}
    if over:
        net = dataclasses.replace(net, **over)
    r = simulate_network(net, replications=reps, seed=seed)
    tot = np.asarray(r.samples["goodput"], dtype=float).reshape(r.replications, -1).sum(axis=1) / 1e6
    g = Estimate.from_samples(tot)
    b = int(net.bottleneck)
    out = {
        "efficiency": _f(r.efficiency.mean), "efficiency_hw": _f(r.efficiency.half_width),
        "efficiency_ip": _f(r.efficiency_ip.mean),
        "fairness": _f(r.fairness.mean), "fairness_hw": _f(r.fairness.half_width),
        "vc_fairness": _f(r.vc_fairness.mean),
        "goodput_mbps": _f(tot.mean()),
        "goodput_mbps_hw": _f(g.half_width),
        "clr": _f(r.cell_loss_ratio.mean), "flr": _f(r.frame_loss_ratio.mean),
        "queue_max_cells": _f(r.queue_max[b]), "queue_mean_cells": _f(r.queue_mean[b].mean),
        "replications": int(r.replications),
    }
    out.update(r.delay.columns(b))     # end to end, and at the bottleneck port (docs/simulator.md, "Delay")
    if r.abr:
        a = r.abr
        out.update({
            "max_switch_queue_cells": _f(max(x["max_switch_queue_cells"] for x in a)),
            "max_switch_queue_rtt": _f(max(x["max_switch_queue_rtt"] for x in a)),
            "diverges": bool(any(x["diverges"] for x in a)),
            "max_source_queue_cells": _f(max(float(np.max(x["max_source_queue_cells"])) for x in a)),
            "mean_source_queue_cells": _f(np.mean([float(np.mean(x["mean_source_queue_cells"])) for x in a])),
            "source_drop_cells": _f(np.mean([float(np.sum(x["source_drops_cells"])) for x in a])),
        })
    return out


#: Registry of sweep methods: name -> point function ``f(params, seed, **options) -> dict``.
METHODS: dict[str, Callable] = {
    "analysis": analysis_point,
    "simulation": simulation_point,
    "effective_capacity": effective_capacity_point,
    "effcap_design": effcap_design_point,
    "network": network_point,
}


def register_method(name: str, func: Callable, *, overwrite: bool = False) -> None:
    """Add ``func`` to :data:`METHODS` under ``name``.

    ``func(params: dict, seed: int, **method_options) -> dict`` must be a module-level
    function (worker processes import it by reference).  Re-registering an existing name
    needs ``overwrite=True``.
    """
    if not isinstance(name, str) or not name or not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"name={name!r} is invalid: must be a non-empty identifier-like string")
    if not callable(func):
        raise ValueError(f"func={func!r} is invalid: must be callable")
    if name in METHODS and METHODS[name] is not func and not overwrite:
        raise ValueError(f"name={name!r} is invalid: already registered (pass overwrite=True)")
    METHODS[name] = func


def method_name(method) -> tuple[str, Callable]:
    """``(name, function)`` of a registered name or a callable (``module:qualname``)."""
    if isinstance(method, str):
        if method not in METHODS:
            raise ValueError(f"method={method!r} is invalid: must be one of "
                             f"{', '.join(map(repr, METHODS))} or a callable")
        return method, METHODS[method]
    if callable(method):
        for name, f in METHODS.items():
            if f is method:
                return name, f
        mod = getattr(method, "__module__", None) or "?"
        qual = getattr(method, "__qualname__", None) or getattr(method, "__name__", None) or repr(method)
        return f"{mod}:{qual}", method
    raise ValueError(f"method={method!r} is invalid: must be a name in METHODS or a callable")
