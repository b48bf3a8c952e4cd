"""Exceptions raised when a computation cannot be trusted.

Bad *input* raises :class:`ValueError` (naming the parameter, its value and the
allowed range).  A computation that ran but whose answer cannot be trusted raises
a :class:`ModelError` subclass with the reason; it never returns a number.
"""

from __future__ import annotations

__all__ = ["ModelError", "ChainTooLargeError", "SolveError", "ErgodicityError"]


class ModelError(RuntimeError):
    """A model computation whose result cannot be trusted."""


class ChainTooLargeError(ModelError):
    """The reachable state space would exceed the configured state or memory limit."""


class SolveError(ModelError):
    """A linear solve or iteration did not reach the required residual."""


class ErgodicityError(ModelError):
    """The chain (or its modulating process) is not irreducible/aperiodic as required."""
