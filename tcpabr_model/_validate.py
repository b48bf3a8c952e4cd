"""Argument checks shared by every public constructor.

Each check raises ``ValueError("<name>=<value> is invalid: must be <range>")`` so
that a user sees which parameter, what was given and what is allowed.  Booleans
(Python's and numpy's) are refused for integer and real parameters: ``True`` is the
integer 1 to Python, but ``bmax=True`` is never what a user meant.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

__all__ = ["check_real", "check_int", "check_choice", "check_probability", "as_float_array", "int_arg"]


def _fmt_range(low, high, low_open, high_open) -> str:
    if low is not None and high is not None:
        lb = "(" if low_open else "["
        hb = ")" if high_open else "]"
        return f"in {lb}{low}, {high}{hb}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high}"
    return "a finite number"


def check_real(
    name: str,
    value,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
) -> float:
    """Return ``float(value)`` after checking it is a real number in the range."""
    rng = _fmt_range(low, high, low_open, high_open)
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}={value!r} is invalid: must be a real number {rng}, not a boolean")
    if not isinstance(value, numbers.Real):
        raise ValueError(f"{name}={value!r} is invalid: must be a real number {rng}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name}={value!r} is invalid: must be a finite number {rng}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(f"{name}={value!r} is invalid: must be {rng}")
    if high is not None and (v > high or (high_open and v == high)):
        raise ValueError(f"{name}={value!r} is invalid: must be {rng}")
    return v


def check_int(name: str, value, low: int | None = None, high: int | None = None) -> int:
    """Return ``int(value)`` after checking it is an integer in ``[low, high]``."""
    rng = _fmt_range(low, high, False, False)
    if isinstance(value, (bool, np.bool_)):  # True is an int to Python, never a count here
        raise ValueError(f"{name}={value!r} is invalid: must be an integer {rng}, not a boolean")
    if not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name}={value!r} is invalid: must be an integer {rng}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"{name}={value!r} is invalid: must be an integer {rng}")
    return v


def check_probability(name: str, value, *, open_low: bool = False, open_high: bool = False) -> float:
    """A probability in [0, 1] (ends optionally excluded)."""
    return check_real(name, value, 0.0, 1.0, low_open=open_low, high_open=open_high)


def check_choice(name: str, value, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name}={value!r} is invalid: must be one of {', '.join(map(repr, choices))}")
    return value


def as_float_array(name: str, value) -> np.ndarray:
    """``np.asarray(value, dtype=float)``; a value that is not numeric (``'abc'``, a ragged
    list) is a ``ValueError`` naming ``name`` instead of numpy's message."""
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise ValueError(f"{name}={shown} is invalid: must be a real number or an array of real numbers") from None


def int_arg(low: int | None = None, high: int | None = None):
    """An argparse ``type`` that reads an integer as ``type=int`` does and refuses any other text with the
    range the command checks the value against (``argument --bmax: 'nan' is invalid: must be an integer in
    [1, 100000]``), where ``type=int`` said only "invalid int value".  The range itself is the command's
    check, after parsing."""
    import argparse

    rng = _fmt_range(low, high, False, False)

    def integer(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is invalid: must be an integer {rng}") from None

    return integer
