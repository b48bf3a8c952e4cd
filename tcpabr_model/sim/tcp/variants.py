"""The TCP variants of both simulators: one vocabulary, one id per variant.

``timeout-only``
    The core paper's model (seed 004 Section III-A, assumption 7; seed 000's "Vanilla"):
    slow start, congestion avoidance, losses recovered by the retransmission timeout only.
``reno``
    Fast retransmit / fast recovery as in 4.4BSD (one loss per window; the first new ACK
    ends recovery), with the RFC 6582 Sec. 4.2 guard against fast retransmits caused by
    the duplicates of a go-back-N retransmission (see ``docs/simulator.md``).
``newreno``
    RFC 6582: the recover point, partial ACKs retransmit the next hole and keep recovery;
    the retransmission timer is reset by the *first* partial ACK of a recovery only (Sec.
    3.2 step 5, the "Impatient" variant of Sec. 4 of RFC 3782 / RFC 6582), so a burst of
    losses ends in a timeout instead of one hole per round trip.
``newreno-steady``
    The same with Fall and Floyd's (1996) "Slow-but-Steady" timer: every partial ACK resets
    the timer (RFC 6582 discusses both; kept to show the difference, docs/simulator.md).
``sack``
    Fall and Floyd's SACK recovery with a scoreboard and ``pipe`` (seed 000 Sec. 2.1).

The spelling ``no-fast-retransmit`` (the single-bottleneck simulator's old name of
``timeout-only``) is accepted with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings

from ..arrays.layout import TCP_NEWRENO, TCP_NEWRENO_STEADY, TCP_RENO, TCP_SACK, TCP_TIMEOUT_ONLY

__all__ = ["VARIANTS", "VARIANT_IDS", "canonical_variant"]

VARIANTS = ("timeout-only", "reno", "newreno", "sack", "newreno-steady")
VARIANT_IDS = {"timeout-only": TCP_TIMEOUT_ONLY, "reno": TCP_RENO, "newreno": TCP_NEWRENO, "sack": TCP_SACK,
               "newreno-steady": TCP_NEWRENO_STEADY}
_DEPRECATED = {"no-fast-retransmit": "timeout-only"}


def canonical_variant(value, name: str = "variant") -> str:
    """The variant's name in the one vocabulary; old spellings warn, others raise.

    Raises
    ------
    ValueError
        ``value`` is not one of :data:`VARIANTS` (nor a deprecated spelling).
    """
    if isinstance(value, str) and value in _DEPRECATED:
        new = _DEPRECATED[value]
        warnings.warn(f"{name}={value!r} is deprecated: use {new!r}", DeprecationWarning, stacklevel=3)
        return new
    if value not in VARIANTS:
        raise ValueError(f"{name}={value!r} is invalid: must be one of {', '.join(VARIANTS)}")
    return value
