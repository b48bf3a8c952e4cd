"""Estimates with confidence intervals, and Jain's fairness index: defined once for the
simulators, the sweeps and the closed forms."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ._validate import as_float_array

__all__ = ["Estimate", "jackknife_se", "jain_index"]


@functools.lru_cache(maxsize=256)
def _t_quantile(q: float, dof: int) -> float:
    """Student-t quantile ``q`` with ``dof`` degrees of freedom (scipy's ``t.ppf``, about 1 ms
    a call: a design asks for the same few hundreds of times)."""
    from scipy import stats

    return float(stats.t.ppf(q, dof))


def jackknife_se(values) -> float:
    """The delete-a-group jackknife's standard error of an estimate from its values ``x_j`` on the
    ``J`` groups' leave-one-out samples: ``sqrt((J - 1) / J sum (x_j - mean x)^2)``."""
    x = np.asarray(values, dtype=float)
    return math.sqrt((x.size - 1) / x.size * float(np.sum((x - x.mean()) ** 2)))


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its Student-t confidence interval.

    ``half_width`` (and ``low``, ``high``) are NaN with fewer than two replications or
    batches: no interval exists then, and :meth:`format` says so instead of printing one.
    ``limits``: the physical range of the quantity, ``(lowest, highest)`` (None: unbounded);
    ``ci_low`` / ``ci_high`` are the interval clipped to it (``low`` / ``high`` are not).
    """

    mean: float
    half_width: float
    low: float
    high: float
    n: int
    level: float = 0.95
    limits: tuple = (None, None)

    @classmethod
    def from_samples(cls, x, level: float = 0.95, limits: tuple = (None, None)) -> "Estimate":
        x = np.asarray(x, dtype=float)
        n = x.size
        m = float(x.mean())
        if n < 2:
            hw = float("nan")
        else:
            hw = float(_t_quantile(0.5 + level / 2, n - 1) * x.std(ddof=1) / math.sqrt(n))
        return cls(m, hw, m - hw, m + hw, n, level, tuple(limits))

    @property
    def has_interval(self) -> bool:
        return not math.isnan(self.half_width)

    @property
    def ci_low(self) -> float:
        """``low`` raised to the quantity's lowest value (unless the mean is below it); NaN without interval."""
        lo = self.limits[0]
        return float(lo) if lo is not None and self.low < lo <= self.mean else self.low

    @property
    def ci_high(self) -> float:
        """``high`` lowered to the quantity's highest value (unless the mean is above it); NaN without interval."""
        hi = self.limits[1]
        return float(hi) if hi is not None and self.mean <= hi < self.high else self.high

    def _clipped_ends(self) -> list:
        """The limits the interval was clipped at (none, one or both)."""
        if not self.has_interval:
            return []
        return [v for v, c in ((self.limits[0], self.ci_low != self.low), (self.limits[1], self.ci_high != self.high))
                if c]

    @property
    def clipped(self) -> bool:
        """Whether the interval reaches past the quantity's physical range."""
        return bool(self._clipped_ends())

    def clip_note(self, fmt: str = ".4f", scale: float = 1.0) -> str:
        """``' (clipped at 0: 0 to 32)'`` (values times ``scale``) when :attr:`clipped`, else ``''``."""
        at = self._clipped_ends()
        if not at:
            return ""
        return (f" (clipped at {' and '.join(f'{scale * v:.4g}' for v in at)}: {scale * self.ci_low:{fmt}} to "
                f"{scale * self.ci_high:{fmt}})")

    def format(self, fmt: str = ".4f") -> str:
        """``'mean +/- half_width'`` (and :meth:`clip_note`), or ``'mean (no CI: n = 1)'`` when no
        interval exists."""
        if not self.has_interval:
            return f"{self.mean:{fmt}} (no CI: n = {self.n})"
        return f"{self.mean:{fmt}} +/- {self.half_width:{fmt}}{self.clip_note(fmt)}"

    def to_dict(self) -> dict:
        """JSON-able dict; NaN (undefined half-width) becomes None.  ``low``/``high`` are mean -/+
        half-width, ``ci_low``/``ci_high`` the same interval clipped to the physical range."""
        def f(v):
            return None if math.isnan(v) else v
        return {"mean": f(self.mean), "half_width": f(self.half_width), "low": f(self.low),
                "high": f(self.high), "ci_low": f(self.ci_low), "ci_high": f(self.ci_high), "n": self.n,
                "level": self.level}


def two_digits(x: float) -> str:
    """``x`` to two significant digits, without an exponent from 100 up (``160``, not ``1.6e+02``): how the
    text output prints a half-width."""
    h = f"{x:.2g}"
    return f"{float(h):.0f}" if "e+" in h else h


def _rates(x, name="x"):
    a = as_float_array(name, x)
    if a.ndim == 0 or a.shape[-1] == 0 or np.any(~np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"{name}={x!r} is invalid: must be a non-empty array of finite values >= 0")
    return a


def jain_index(x, axis=-1, *, undefined: str = "raise"):
    """Jain's fairness index :math:`(\\sum x)^2/(n\\sum x^2)` along ``axis`` (vectorised;
    seed 000 Sec. 4.2, seed 001 eq. 1), in [1/n, 1].

    When every value along the axis is 0 the index is undefined: ``undefined='raise'``
    raises ``ValueError``, ``undefined='nan'`` returns NaN there (a replication in which no
    connection delivered anything).
    """
    a = _rates(x)
    top = np.max(a, axis=axis, keepdims=True)
    zero = top == 0
    if np.any(zero):
        if undefined != "nan":
            shown = a.tolist() if a.size <= 10 else f"array of shape {a.shape}"
            raise ValueError(f"x={shown} is invalid: the fairness index is undefined when every throughput "
                             "is 0 (give at least one throughput > 0)")
        top = np.where(zero, 1.0, top)
    a = a / top  # scale-free: avoids under/overflow of the squares
    s2 = np.sum(a * a, axis=axis)
    n = a.shape[axis]
    with np.errstate(invalid="ignore", divide="ignore"):
        j = np.sum(a, axis=axis) ** 2 / (n * s2)
    j = np.minimum(j, 1.0)  # guard the rounding of the equal-rates case
    return float(j) if np.ndim(j) == 0 else j
