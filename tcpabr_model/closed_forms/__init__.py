"""Closed forms: effective capacity, EFFCAP, window-to-throughput, ATM overhead, fairness.

Effective capacity of a Markov-modulated link, exact (seed 004 Sec. IV, eqs. 23-24)
    effective_capacity, effective_capacity_solve, EffectiveCapacityResult,
    effective_capacity_limits, effective_capacity_eq24, min_cycle_mean
    (``chain_effective_capacity``); stationary_distribution, stationary_mean of the
    modulating chain (``modulating_chain``)
Two-state closed form of eq. 23 (sympy)
    two_state_matrix, derive_two_state_effective_capacity, effective_capacity_two_state
QoS exponent delta and the inverse of eq. 23
    qos_delta, delta_for_rate, delta_for_rate_two_state
Finite-sample estimators and EFFCAP (eqs. 24-28, Section VI design rule)
    block_sums, effcap_estimate, effcap_eq24, effcap_eq26_terms, effcap_min_block_average,
    effcap_feedback_series, effcap_design, EffcapDesign
Window-to-throughput (seed 002 eqs. 1-2, FIFO share)
    throughput_from_window, derive_eq2_closed_form, average_window_linear,
    average_window_linear_sum, sawtooth_average_window, sawtooth_throughput, fifo_share
ATM accounting (seeds 000, 002, 004)
    Encapsulation, cells_per_packet, padding_bytes, tcp_efficiency, tcp_max_throughput,
    atm_cell_efficiency, CELL_BYTES, CELL_PAYLOAD, SONET_PAYLOAD_FRACTION
TCP at constant capacity (Lakshman and Madhow 1997, seed 004 ref. [15])
    reno_efficiency, slow_start_overflows, slow_start_peak_queue, SLOW_START_LOSS_BETA (``window``)
Fairness and efficiency
    jain_index, efficiency_seed000, efficiency_seed001, efficiency_seed004
Delta calibration experiment (Section IV)
    see :mod:`tcpabr_model.closed_forms.calibration` (imported lazily: it pulls in models)
"""

from .atm import (
    CELL_BYTES,
    CELL_PAYLOAD,
    SONET_PAYLOAD_FRACTION,
    Encapsulation,
    atm_cell_efficiency,
    cells_per_packet,
    padding_bytes,
    tcp_efficiency,
    tcp_max_throughput,
)
from .chain_effective_capacity import (
    EffectiveCapacityResult,
    effective_capacity,
    effective_capacity_eq24,
    effective_capacity_limits,
    effective_capacity_solve,
    min_cycle_mean,
)
from .estimators import (
    EffcapDesign,
    block_sums,
    effcap_design,
    effcap_eq24,
    effcap_eq26_terms,
    effcap_estimate,
    effcap_feedback_series,
    effcap_min_block_average,
)
from .fairness import efficiency_seed000, efficiency_seed001, efficiency_seed004, jain_index
from .modulating_chain import stationary_distribution, stationary_mean
from .qos_exponent import delta_for_rate, delta_for_rate_two_state, qos_delta
from .two_state_closed_form import (
    derive_two_state_effective_capacity,
    effective_capacity_two_state,
    two_state_matrix,
)
from .window import (
    SLOW_START_LOSS_BETA,
    average_window_linear,
    average_window_linear_sum,
    derive_eq2_closed_form,
    fifo_share,
    reno_efficiency,
    sawtooth_average_window,
    sawtooth_throughput,
    slow_start_overflows,
    slow_start_peak_queue,
    throughput_from_window,
)

__all__ = [
    "CELL_BYTES",
    "CELL_PAYLOAD",
    "EffcapDesign",
    "EffectiveCapacityResult",
    "Encapsulation",
    "SLOW_START_LOSS_BETA",
    "SONET_PAYLOAD_FRACTION",
    "atm_cell_efficiency",
    "average_window_linear",
    "average_window_linear_sum",
    "block_sums",
    "cells_per_packet",
    "delta_for_rate",
    "delta_for_rate_two_state",
    "derive_eq2_closed_form",
    "derive_two_state_effective_capacity",
    "effcap_design",
    "effcap_eq24",
    "effcap_eq26_terms",
    "effcap_estimate",
    "effcap_feedback_series",
    "effcap_min_block_average",
    "effective_capacity",
    "effective_capacity_eq24",
    "effective_capacity_limits",
    "effective_capacity_solve",
    "effective_capacity_two_state",
    "efficiency_seed000",
    "efficiency_seed001",
    "efficiency_seed004",
    "fifo_share",
    "jain_index",
    "min_cycle_mean",
    "padding_bytes",
    "qos_delta",
    "reno_efficiency",
    "sawtooth_average_window",
    "sawtooth_throughput",
    "slow_start_overflows",
    "slow_start_peak_queue",
    "stationary_distribution",
    "stationary_mean",
    "tcp_efficiency",
    "tcp_max_throughput",
    "throughput_from_window",
    "two_state_matrix",
]
