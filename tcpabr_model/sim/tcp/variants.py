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
``timeout-only``) is accepted with a :class:`DeprecationWarning` attributed to the first
caller outside the package (so Python's default filters show it in a script), and by
``tcpabr simulate --variant`` with one warning line on stderr.
"""

from __future__ import annotations

import os
import sys
import warnings

from ..arrays.layout import TCP_NEWRENO, TCP_NEWRENO_STEADY, TCP_RENO, TCP_SACK, TCP_TIMEOUT_ONLY

__all__ = ["VARIANTS", "VARIANT_IDS", "DEPRECATED_VARIANTS", "canonical_variant"]

VARIANTS = ("timeout-only", "reno", "newreno", "sack", "newreno-steady")
VARIANT_IDS = {"timeout-only": TCP_TIMEOUT_ONLY, "reno": TCP_RENO, "newreno": TCP_NEWRENO, "sack": TCP_SACK,
               "newreno-steady": TCP_NEWRENO_STEADY}
#: old spellings accepted with a warning, and the name each stands for
DEPRECATED_VARIANTS = {"no-fast-retransmit": "timeout-only"}
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _caller_level() -> int:
    """``stacklevel`` for :func:`warnings.warn` in the caller that names the first frame outside
    the package (generated dataclass ``__init__`` code counts as inside)."""
    f = sys._getframe(2)      # the caller of the function that warns
    level = 2
    while f is not None and (f.f_code.co_filename.startswith(_PACKAGE) or f.f_code.co_filename.startswith("<")):
        f = f.f_back
        level += 1
    return level


def canonical_variant(value, name: str = "variant") -> str:
    """The variant's name in the one vocabulary; old spellings warn, others raise.

    Raises
    ------
    ValueError
        ``value`` is not one of :data:`VARIANTS` (nor a deprecated spelling).
    """
    if isinstance(value, str) and value in DEPRECATED_VARIANTS:
        new = DEPRECATED_VARIANTS[value]
        warnings.warn(f"{name}={value!r} is deprecated: use {new!r}", DeprecationWarning, stacklevel=_caller_level())
        return new
    if value not in VARIANTS:
        raise ValueError(f"{name}={value!r} is invalid: must be one of {', '.join(VARIANTS)}")
    return value
