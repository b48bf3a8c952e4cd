r"""Fairness index and the efficiency definitions of seeds 000, 001 and 004.

* Jain's fairness index (seed 000 Section 4.2, seed 001 eq. 1):
  :math:`J = (\sum x_i)^2 / (n \sum x_i^2)`, in :math:`[1/n, 1]`.
* Seed 000 efficiency: (sum of TCP throughputs) / (maximum possible TCP throughput), the
  maximum after TCP/IP, LLC and AAL5 overhead and cell padding (and any capacity used by
  higher-priority VBR).
* Seed 001 efficiency: the aggregate goodput :math:`\sum g_i` (optionally as a fraction of a
  reference rate).
* Seed 004 efficiency: throughput / mean capacity of the bottleneck link (TCP/IP headers
  counted as throughput, ATM headers as overhead).
"""

from __future__ import annotations

import numpy as np

from .._validate import check_real
from ..stats import _rates, jain_index

__all__ = ["jain_index", "efficiency_seed000", "efficiency_seed001", "efficiency_seed004"]


def efficiency_seed000(throughputs, max_tcp_throughput):
    """Seed 000: :math:`\\sum_i x_i / X_{max}` with :math:`X_{max}` the TCP-layer maximum."""
    a = _rates(throughputs, "throughputs")
    m = check_real("max_tcp_throughput", max_tcp_throughput, 0.0, low_open=True)
    return float(np.sum(a) / m)


def efficiency_seed001(goodputs, reference_rate=None):
    """Seed 001: aggregate goodput :math:`\\sum g_i` (divided by ``reference_rate`` if given)."""
    a = _rates(goodputs, "goodputs")
    tot = float(np.sum(a))
    if reference_rate is None:
        return tot
    return tot / check_real("reference_rate", reference_rate, 0.0, low_open=True)


def efficiency_seed004(throughput, mean_capacity):
    """Seed 004: throughput (packets incl. TCP/IP headers) / mean link capacity."""
    t = check_real("throughput", throughput, 0.0)
    m = check_real("mean_capacity", mean_capacity, 0.0, low_open=True)
    return t / m
