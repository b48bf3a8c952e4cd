"""The TCP variants of both simulators: one vocabulary, one id per variant.

``timeout-only``
    The core paper's model (seed 004 Section III-A, assumption 7; seed 000's "Vanilla"):
    slow start, congestion avoidance, losses recovered by the retransmission timeout only.
``reno``
    Fast retransmit / fast recovery as in 4.4BSD (one loss per window; the first new ACK
    ends recovery), with the RFC 6582 Sec. 4.2 guard against fast retransmits caused by
    the duplicates of a go-back-N retransmission (see ``docs/simulator.md``).
``newreno``
    RFC 6582: the recover point, partial ACKs retransmit the next hole and keep recovery.
``sack``
    Fall and Floyd's SACK recovery with a scoreboard and ``pipe`` (seed 000 Sec. 2.1).

The spelling ``no-fast-retransmit`` (the single-bottleneck simulator's old name of
``timeout-only``) is accepted with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings

from ._layout import TCP_NEWRENO, TCP_RENO, TCP_SACK, TCP_TIMEOUT_ONLY

__all__ = ["VARIANTS", "VARIANT_IDS", "canonical_variant"]

VARIANTS = ("timeout-only", "reno", "newreno", "sack")
VARIANT_IDS = {"timeout-only": TCP_TIMEOUT_ONLY, "reno": TCP_RENO, "newreno": TCP_NEWRENO, "sack": TCP_SACK}
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
