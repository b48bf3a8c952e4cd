"""Size, memory and time of an embedded chain before it is built (docs/model.md, sec. 5).

The state count is exact (for any number K of capacity levels: the enumeration does not
depend on the rate chain's matrix): :func:`estimate_chain` runs the enumeration of
``enumeration.build_skeleton`` in counting mode (same reachability rules, including the
1e-17 tail of the increment and loss-window laws, nothing stored), stopping as soon as
the count passes the limit.  Nonzeros follow exactly from the count of (state, N)
loss-free entries and (state, m) loss entries; memory and time are estimates from the
constants below (measured, benchmarks/README.md, Markov section).

The limit of the count is also the memory: a chain of more than :data:`PROBE_STATES`
states is first counted up to that many, which gives its nonzeros per state, hence its
bytes per state; the count then stops as soon as more states are proven reachable than
fit in the available memory at that cost, whatever ``max_states`` allows (issue 24: a
67 GB chain was counted to the end, 34 million states, before the memory refused it).

An analysis does not count first: :func:`~.skeleton.skeleton_for` builds the chain with the
memory check of :func:`check_fits` inside the build (:func:`memory_budget`) and counts only a
chain that stopped there, to refuse it with its size (docs/model.md sec. 5a item 10).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass

import numpy as np

from ..errors import ChainTooLargeError
from .scenario import allowed_levels

__all__ = ["ChainEstimate", "estimate_chain", "available_memory", "check_fits"]

#: peak bytes of build + assembly + structured solve per nonzero of P and per state: the
#: peak RSS growth of ``analyze`` is 30-33 B per nonzero at 1.1e5-1e6 states with two levels
#: (skeleton about 11, P 12 with int32 indices; T is not stored; benchmarks/README.md,
#: "Memory per nonzero (issue 23 item 2)"; it was 39-44 B before), so these overestimate
#: by about 1.5x.  For K > 2 the matrix-free solve stores no P (``MF_*`` below).
BYTES_PER_NONZERO = 40
BYTES_PER_STATE = 400
#: K > 2, the matrix-free solve (docs/model.md sec. 5a item 9): bytes per loss-free (state, N)
#: entry (8 probability + 4 tail id, with the build's growth slack) and per loss entry, plus 4
#: per edge of T (K per entry) for the solver's working memory, the large SCC blocks' entries
#: and ILU(0) (20 bytes per entry inside a block; docs/model.md sec. 8, "Large blocks"; it
#: first stood for the closed-class graph, no longer copied, then for the blocks' sparse LU
#: factors) [measured, an allowance, not a bound]: TMobile-LTE half A, RTT 50 ms, B_max 166,
#: TCP alone (545,248 states, 4.99e7 entries, K = 8): peak RSS 3.1-3.4 GB against 2.95 GB from
#: these and 0.23 GB of interpreter (with the LU factors).  SuperLU's factors, the fallback,
#: stop the solve with ChainTooLargeError where they outgrow the memory (``blocks.sparse_blocks``).
MF_BYTES_PER_ENTRY = 20
MF_BYTES_PER_LOSS_ENTRY = 40
MF_BYTES_PER_GRAPH_EDGE = 4
#: a chain's bytes per state at a typical 40 nonzeros per state (about 2 kB): where ``max_states``
#: of them fit in the available memory the memory cannot bind first (``estimate_chain``,
#: ``skeleton_for``)
TYPICAL_BYTES_PER_STATE = BYTES_PER_STATE + 40 * BYTES_PER_NONZERO
#: build seconds per loss-free (state, N) entry and solve seconds per nonzero (this VM, shared).
BUILD_SECONDS_PER_ENTRY = 4e-7
SOLVE_SECONDS_PER_NONZERO = 3e-7
#: runs expected to take longer than this show a progress bar (unless disabled)
PROGRESS_AFTER_SECONDS = 2.0
#: states counted first to measure a large chain's nonzeros per state (0.1-0.4 s)
PROBE_STATES = 200_000
#: the enumeration's dense tables over (level, source level) pairs are refused above the larger of this and
#: ``max_states`` chains' typical memory (:func:`check_tables`)
TABLE_BYTES_FLOOR = 512e6
#: and where this many times them exceed the available memory: the build's room for regeneration states, also
#: per (level, source level) pair, comes on top [measured: EFFCAP M 4, N 16 on two levels, 2,824 levels and
#: 6.3 GB of tables, passed 16.8 GB of resident memory before it was stopped]
TABLE_PEAK_FACTOR = 3.0


@dataclass(frozen=True)
class ChainEstimate:
    """What building and solving a scenario's chain will take.

    ``n_states`` is exact when ``complete``.  Otherwise more than ``limit`` states are
    proven reachable and ``n_states`` is ``limit + 1``, that lower bound: the count stops
    when it has *found* more than ``limit`` states or when the saturated runs it has met
    imply more (docs/model.md sec. 5), so ``states_found`` (the states enumerated when it
    stopped) may be far below ``limit``.  ``limit`` is ``max_states`` (or the ``limit``
    asked), or, when ``memory_limited``, the smaller number of states that fit in the
    available memory at ``bytes_per_state``.  ``nnz`` is an upper bound on the nonzeros of
    P (loss-free entries times the rate levels plus loss entries times the (R, S) pairs
    they reach) of the states processed; ``bytes`` and ``seconds`` are estimates (when not
    ``complete``, of the ``n_states`` proven so far, at ``bytes_per_state``).
    """

    n_states: int
    complete: bool
    limit: int
    loss_free_entries: int
    loss_entries: int
    nnz: int
    bytes: int
    seconds: float
    count_seconds: float
    states_found: int = 0
    bytes_per_state: float = 0.0
    memory_limited: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def available_memory() -> int:
    """Bytes of memory available to this process (MemAvailable on Linux, else total)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def _kernel_args(key: tuple):
    from .kernels.interval import MODE_ABR, MODE_TCP_ALONE

    delta, bmax, levels, wmax, feedback, source_rate = key[:6]
    with np.errstate(divide="ignore"):   # an outage level (service patterns only): no service, s = inf
        r_vals = 1.0 / np.array(levels, dtype=float)  # service time 1 / c_k of each level
    mcr = key[8]
    if isinstance(mcr, tuple):   # EFFCAP's history chain: each state's own source level (docs/model.md sec. 20)
        with np.errstate(divide="ignore"):
            s_vals, constant_s = 1.0 / np.array(mcr, dtype=float), False
    elif feedback == "constant":
        s_vals, constant_s = np.full(len(levels), 1.0 / source_rate), True
    elif mcr > 0.0:    # INSTCAP with a minimum cell rate: the source sends at max(c_S, MCR) (sec. 11)
        s_vals, constant_s = 1.0 / np.maximum(np.array(levels, dtype=float), mcr), False
    else:
        s_vals, constant_s = r_vals.copy(), False
    if feedback == "none":
        mode, a0, b0, d0 = MODE_TCP_ALONE, 0, 0, 1
    else:
        mode, a0, b0, d0 = MODE_ABR, 1, 0, 0
    return mode, constant_s, float(delta), int(bmax), int(wmax), r_vals, s_vals, a0, b0, d0


def pattern_args(key: tuple) -> tuple:
    """The kernels' service-pattern arrays ``(pat_ptr, pat_w, opp_ptr, opp_t)`` of a scenario
    with ``service`` (docs/model.md sec. 11), or () without (the kernel's defaults)."""
    sk = key[7]
    if sk is None:
        return ()
    pat_ptr, pat_w, opp_ptr, opp_t = sk
    return (np.array(pat_ptr, dtype=np.int64), np.array(pat_w, dtype=float), np.array(opp_ptr, dtype=np.int64),
            np.array(opp_t, dtype=float))


def table_bytes(key: tuple) -> float:
    """The bytes that :func:`~.kernels.enumeration.build_skeleton` allocates before its first state: the
    regeneration index ``(m, R, S)`` and the interval tables ``(b, R, S)`` (ABR), dense over the levels
    ``R`` and the source levels ``S`` (as many as the levels, one for a constant source)."""
    bmax, nlev, wmax = int(key[1]), len(key[2]), int(key[3])
    n_rs = 1 if key[4] == "constant" else nlev
    npat = 1 if key[7] is None else len(key[7][1])
    per_b = (3 + (key[9] != "timeout-only")) * nlev + 2 * npat    # tab_il, tab_k, steady_a (tab_nd); ptab_*
    return 8.0 * n_rs * (((wmax + 1) // 2 + 1) * nlev + (bmax + 1) * per_b)


def check_tables(key: tuple, limit: int) -> None:
    """:class:`ChainTooLargeError` before any state is made where :func:`table_bytes` exceeds the available
    memory or the larger of :data:`TABLE_BYTES_FLOOR` and ``limit`` states at a typical density: an EFFCAP
    history chain of thousands of levels (e.g. M 4, N 16 on two levels: 2,824) made the build allocate 9.6 GB
    and take 40 s only to refuse the chain at ``max_states`` 20,000 (a CLI audit, Nov 29)."""
    need = table_bytes(key)
    budget = max(TABLE_BYTES_FLOOR, float(limit) * TYPICAL_BYTES_PER_STATE)
    memory = available_memory() / TABLE_PEAK_FACTOR
    if need > min(budget, memory):
        why = (f"max_states={limit} chains allow (or raise max_states)" if budget <= memory else
               f"the available memory allows ({TABLE_PEAK_FACTOR:g} times them, with the build's room for "
               "regeneration states)")
        raise ChainTooLargeError(
            f"the embedded chain's {len(key[2])} capacity levels (delta={key[0]:g}, bmax={key[1]}, wmax={key[3]}, "
            f"feedback={key[4]!r}) need {need / 1e9:.1f} GB of tables over (level, source level) pairs before its "
            f"first state, above the {min(budget, memory) / 1e9:.1f} GB that {why}; use fewer levels (EFFCAP: a "
            "smaller M + N, or fewer capacity states)")


def build_args(key: tuple, limit: int, count_only: bool, progress: np.ndarray,
               mem: np.ndarray | None = None) -> tuple:
    """Every argument of :func:`~.kernels.enumeration.build_skeleton` for the structure ``key``;
    ``mem`` the build's memory budget (:func:`memory_budget`).  Refuses first where the kernel's dense
    tables alone would pass the budget (:func:`check_tables`).

    Every optional argument is given, each with one type whatever the scenario (a budget that never
    stops the build for ``mem=None``, every level pair allowed where the chain can enter all, no
    silence where the chain has none): numba then compiles the kernel once with and once without
    service patterns, instead of once per combination of options (19 in a test run, each about 20 s;
    docs/model.md sec. 5a item 15)."""
    check_tables(key, limit)
    nlev = len(key[2])
    n_rs = 1 if key[4] == "constant" else nlev   # the kernel's source levels S
    sack = key[9] != "timeout-only"   # tcp='sack': fast recovery (docs/model.md sec. 12)
    burst = bool(key[10]) and not count_only   # the go-back-N burst's share (sec. 15b); a count needs none
    counter = key[11] == "counter"    # ca_increment='counter': an ACK counter for eq. 1's coins (sec. 18)
    allow = allowed_levels(key)   # no state that the chain cannot enter (docs/model.md sec. 10)
    spread = key[6] == "spread"   # ack_clock='spread' (TCP alone): the ACKs spread over the interval (sec. 3a)
    sil = key[13] if len(key) > 13 else None      # silence='patterns' (sec. 11b); older keys have none
    return (_kernel_args(key) + (int(limit), count_only, progress, ack_phase(key))
            + (pattern_args(key) or (None, None, None, None))
            + (sack, memory_budget(key, np.inf) if mem is None else mem, burst, counter,
               np.ones((n_rs, nlev), dtype=np.bool_) if allow is None else allow, spread,
               np.zeros(n_rs) if sil is None else np.array(sil, dtype=float)))


def memory_budget(key: tuple, budget: float | None = None) -> np.ndarray:
    """The build's memory stop (``build_skeleton(..., mem=)``): the bytes per state, per
    loss-free entry and per loss entry of :func:`_bytes` (the estimate :func:`check_fits`
    refuses on) and the budget, by default the available memory; ``[4]`` is set to 1 by a
    build stopped there."""
    nlev = len(key[2])
    per_loss = nlev if key[4] == "constant" else nlev * nlev
    return np.array([_bytes(1, 0, 0, nlev, per_loss), _bytes(0, 1, 0, nlev, per_loss),
                     _bytes(0, 0, 1, nlev, per_loss), float(available_memory() if budget is None else budget),
                     0.0])


def ack_phase(key: tuple) -> float:
    """The kernel's ACK-clock phase for ``Scenario.ack_clock`` (``key[6]``; 'spread' starts at T_k too)."""
    return 1.0 if key[6] == "after-service" else 0.0


def run_with_progress(fn, args: tuple, progress: np.ndarray, total: int | None, desc: str,
                      show: bool):
    """Run the nogil kernel ``fn(*args)`` in a worker thread; a tqdm bar follows
    ``progress[0]`` when ``show`` and the run lasts longer than PROGRESS_AFTER_SECONDS
    (always when that is 0)."""
    out: list = []
    err: list = []

    def work():
        try:
            out.append(fn(*args))
        except BaseException as exc:  # re-raised in the caller's thread
            err.append(exc)

    th = threading.Thread(target=work, daemon=True)
    th.start()
    th.join(PROGRESS_AFTER_SECONDS if show else None)
    if show and (th.is_alive() or PROGRESS_AFTER_SECONDS <= 0):  # 0: always (tests)
        from tqdm.auto import tqdm

        with tqdm(total=total, desc=desc, unit="state", unit_scale=True) as bar:
            while th.is_alive():
                th.join(0.2)
                bar.n = int(progress[0])
                bar.refresh()
            bar.n = int(progress[0])
            bar.refresh()
    th.join()
    if err:
        raise err[0]
    return out[0]


#: the last counts (:func:`_count`) by (structure key, limit): a caller that estimates a chain
#: before analysing it (``tcpabr design``, ``tcpabr analyze --trace``) and the build's own
#: estimate (:func:`~.skeleton.skeleton_for`) count it once
_COUNTS: "OrderedDict[tuple, tuple]" = OrderedDict()
_COUNTS_SIZE = 16


def _cached_count(key: tuple, limit: int):
    """The count of ``key`` up to ``limit`` if made already (the same limit, or a complete
    count, which holds for every limit above it), else None."""
    ck = (key, int(limit))
    got = _COUNTS.get(ck)
    if got is not None:
        _COUNTS.move_to_end(ck)
        return got
    for (k2, _), g2 in _COUNTS.items():
        if k2 == key and not g2[1] and g2[0] <= limit:
            return g2
    return None


def _count(key: tuple, limit: int, progress: bool):
    """Run the counting enumeration up to ``limit``: (found, overflow, loss-free entries, loss
    entries, states processed, seconds).  The enumeration is deterministic: a count already
    made (the same key and limit) is returned again, its seconds those of the first count."""
    from .kernels.enumeration import build_skeleton

    got = _cached_count(key, limit)
    if got is not None:
        return got
    ck = (key, int(limit))
    prog = np.zeros(2, dtype=np.int64)
    t0 = time.perf_counter()
    out = run_with_progress(build_skeleton, build_args(key, limit, True, prog), prog, None,
                            "counting states", progress)
    got = (out[0].shape[0], bool(out[12]), int(out[13]), int(out[14]), max(1, int(prog[0])),
           time.perf_counter() - t0)
    _COUNTS[ck] = got
    if len(_COUNTS) > _COUNTS_SIZE:
        _COUNTS.popitem(last=False)
    return got


def _mirrored_limit(key: tuple, fit: int) -> int | None:
    """The count limit ``L`` such that a count stopped by the saturated-run bound (more than
    ``L`` states in steady runs ``(a, b, M, R, R)``, fewer found) proves more than ``fit``
    states; None where the runs have no mirrors (TCP alone, a constant source, service
    patterns, one level).

    Every state of a steady run moves with N = 1 (probability > 1e-17, docs/model.md sec. 5)
    to ``(a + c, b, M, r, R)`` for *every* next level r; for r != R these are states with
    R != S, outside every steady run, one run of at least (length - 1) states per (pattern,
    r).  So the runs' ``n`` states imply ``n + (K - 1)(n - P)`` states, P <= (bmax + 1) K
    the number of steady patterns.  Checked against exact counts (docs/model.md sec. 5).
    """
    delta, bmax, levels, wmax, feedback = key[:5]
    nlev = len(levels)
    if feedback != "instcap" or key[7] is not None or nlev < 2:
        return None
    patterns = (int(bmax) + 1) * nlev
    return -(-(fit + (nlev - 1) * patterns) // nlev)   # ceil


def _bytes(n_states: float, n_nl: float, n_ls: float, nlev: int, per_loss: int) -> float:
    """Peak bytes of build and solve: the assembled P (K <= 2, ``BYTES_PER_NONZERO`` per
    nonzero) or the matrix-free solve's stored entries and class graph (K > 2, the default
    ``structured`` method; an assembled method on such a chain needs the K <= 2 figure)."""
    if nlev > 2:
        return (BYTES_PER_STATE * n_states + (MF_BYTES_PER_ENTRY + MF_BYTES_PER_GRAPH_EDGE * nlev) * n_nl
                + MF_BYTES_PER_LOSS_ENTRY * n_ls)
    return BYTES_PER_STATE * n_states + BYTES_PER_NONZERO * (nlev * n_nl + per_loss * n_ls)


def estimate_chain(scenario, limit: int | None = None, progress: bool = False) -> ChainEstimate:
    """Count the states of ``scenario``'s chain exactly (stopping above ``limit``,
    default ``scenario.max_states``, or above the states that fit in the available
    memory) and estimate nonzeros, memory and time."""
    from .._validate import check_int
    from .scenario import Scenario

    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario={scenario!r} is invalid: must be a tcpabr_model.markov.Scenario")
    limit = scenario.max_states if limit is None else check_int("limit", limit, 1)
    key = scenario.structure_key()
    nlev = len(key[2])
    per_loss = nlev if key[4] == "constant" else nlev * nlev
    # below about 2 kB per state the memory cannot bind before max_states: one count, to the limit
    count_limit = limit if limit * TYPICAL_BYTES_PER_STATE < available_memory() else min(limit, PROBE_STATES)
    memory_limited = False
    found, overflow, n_nl, n_ls, done, t_count = _count(key, count_limit, progress)
    per_state = _bytes(1, n_nl / done, n_ls / done, nlev, per_loss)
    proven = 0
    if overflow and count_limit < limit:
        # a large chain: stop at max_states or at the states that fit in memory, the fewer
        fit = int(available_memory() // per_state)
        memory_limited = fit < limit
        mirror = _mirrored_limit(key, fit) if memory_limited else None
        if mirror is not None:
            found, overflow, n_nl, n_ls, done, t_more = _count(key, mirror, progress)
            t_count += t_more
            if overflow and found < mirror:   # stopped by the saturated runs: with their mirrors, > fit
                proven = (mirror + 1) * nlev - (nlev - 1) * (int(key[1]) + 1) * nlev
        count_limit = max(count_limit, min(limit, fit))
        if count_limit > PROBE_STATES and not proven and (mirror is None or overflow):
            found, overflow, n_nl, n_ls, done, t_more = _count(key, count_limit, progress)
            t_count += t_more   # (per_state stays the probe's: the one the limit was computed with)
    nnz = nlev * n_nl + per_loss * n_ls
    if overflow:
        n = max(proven, count_limit + 1)
        size = int(per_state * n)
    else:
        n = found
        size = int(_bytes(n, n_nl, n_ls, nlev, per_loss))
        memory_limited = False
    return ChainEstimate(
        n_states=n, complete=not overflow, limit=count_limit, loss_free_entries=n_nl, loss_entries=n_ls,
        nnz=nnz, bytes=size, seconds=BUILD_SECONDS_PER_ENTRY * n_nl + SOLVE_SECONDS_PER_NONZERO * nnz,
        count_seconds=t_count, states_found=found, bytes_per_state=per_state, memory_limited=memory_limited)


def over_max_states(limit: int, where: str, seconds: float) -> ChainTooLargeError:
    """The refusal of a chain with more than ``limit`` = max_states states, found by the count
    (:func:`check_fits`) or by a build that ran without one (``skeleton._build``)."""
    return ChainTooLargeError(
        f"the embedded chain has more than max_states={limit} reachable states ({where}; counted in "
        f"{seconds:.1f} s); raise max_states (about {TYPICAL_BYTES_PER_STATE / 1e3:.1f} kB "
        "per state) or reduce wmax, bmax or delta")


def check_fits(est: ChainEstimate, scenario) -> None:
    """Raise :class:`ChainTooLargeError` if ``est`` is over max_states or the memory."""
    where = (f"delta={scenario.delta:g}, bmax={scenario.bmax}, wmax={scenario.wmax}, "
             f"feedback={scenario.feedback!r}")
    if not est.complete and est.memory_limited:
        raise ChainTooLargeError(
            f"the embedded chain has more than {est.limit} reachable states ({where}; counted in "
            f"{est.count_seconds:.1f} s), about {est.bytes_per_state / 1e3:.1f} kB each (the nonzeros per state "
            f"of the first states): more than {est.bytes / 1e9:.1f} GB, above the "
            f"{available_memory() / 1e9:.1f} GB of memory available; reduce wmax, bmax or delta")
    if not est.complete:
        raise over_max_states(est.limit, where, est.count_seconds)
    avail = available_memory()
    if est.bytes > avail:
        raise ChainTooLargeError(
            f"the embedded chain ({est.n_states} states, {est.nnz} nonzeros; {where}) needs about "
            f"{est.bytes / 1e9:.1f} GB, above the {avail / 1e9:.1f} GB of memory available")
