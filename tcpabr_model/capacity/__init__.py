"""Capacity models (K-level Markov-modulated links) and measured link traces.

Model (:mod:`._model`)
    CapacityModel -- levels (packets per time unit) with a transition matrix per epoch or
    a generator; validated, immutable.  two_state (the paper's chain), constant,
    from_arrays.
Files (:mod:`._io`)
    save_model, load_model -- JSON or TOML, with a format version.
Traces (:mod:`._trace`)
    Trace, read_trace, write_trace (Mahimahi format), BinnedTrace (with the empirical
    effective capacity, eq. 25), bin_trace, synthetic_trace (a seeded trace from a model),
    chain_path (a seeded path of the chain), trace_less_block (a jackknife's part).
Fitting (:mod:`._fit`)
    fit_trace -> TraceFit (levels by k-means or quantiles, ML transition matrix, K by
    BIC, occupancy / autocorrelation / effective-capacity report), fit_levels,
    chain_autocorrelation, trace_autocorrelation.
EFFCAP's view (:mod:`._effcap_chain`)
    effcap_history_chain -> HistoryChain: the lumped chain of the last M + N - 1 levels with
    eq. 28's rate after each, which the Markov engine analyses as TCP over EFFCAP.
Second order (:mod:`._order`)
    second_order_chain, pair_labels, expand_patterns, level_sojourns -- the chain on
    (previous, current) pairs of a fitted chain's states (``fit_trace(order=2)``, issue 23).
Inside an epoch (:mod:`._patterns`)
    ServicePatterns, fit_patterns, epoch_labels -- the opportunity times of a trace inside
    an epoch, a few weighted patterns per level of a fitted chain (issue 23).
"""

from ._fit import (
    EC_TOL,
    LEVEL_METHODS,
    MAX_AUTO_STATES,
    TraceFit,
    chain_autocorrelation,
    correlation_time,
    fit_levels,
    fit_trace,
    regime_labels,
    trace_autocorrelation,
)
from ._effcap_chain import MAX_HISTORIES, HistoryChain, effcap_history_chain
from ._io import load_model, save_model
from ._order import ORDERS, expand_patterns, level_sojourns, pair_labels, previous_states, second_order_chain
from ._patterns import ServicePatterns, epoch_labels, fit_patterns, service_instants
from ._model import CapacityModel, constant, from_arrays, two_state
from ._trace import (
    MAHIMAHI_PACKET_BYTES,
    BinnedTrace,
    Trace,
    bin_trace,
    chain_path,
    read_trace,
    synthetic_trace,
    trace_less_block,
    write_trace,
)

__all__ = [
    "BinnedTrace", "CapacityModel", "ServicePatterns", "epoch_labels", "fit_patterns", "LEVEL_METHODS", "MAHIMAHI_PACKET_BYTES", "MAX_AUTO_STATES", "Trace",
    "TraceFit", "bin_trace", "chain_autocorrelation", "chain_path", "constant", "correlation_time", "fit_levels", "fit_trace", "from_arrays",
    "load_model", "read_trace", "regime_labels", "save_model", "service_instants", "synthetic_trace", "trace_autocorrelation", "two_state",
    "write_trace", "trace_less_block", "HistoryChain", "effcap_history_chain", "MAX_HISTORIES", "EC_TOL",
    "ORDERS", "expand_patterns", "level_sojourns", "pair_labels", "previous_states", "second_order_chain",
]
