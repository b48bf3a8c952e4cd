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
    """

    mean: float
    half_width: float
    low: float
    high: float
    n: int
    level: float = 0.95

    @classmethod
    def from_samples(cls, x, level: float = 0.95) -> "Estimate":
        x = np.asarray(x, dtype=float)
        n = x.size
        m = float(x.mean())
        if n < 2:
            hw = float("nan")
        else:
            hw = float(_t_quantile(0.5 + level / 2, n - 1) * x.std(ddof=1) / math.sqrt(n))
        return cls(m, hw, m - hw, m + hw, n, level)

    @property
    def has_interval(self) -> bool:
        return not math.isnan(self.half_width)

    def format(self, fmt: str = ".4f") -> str:
        """``'mean +/- half_width'``, or ``'mean (no CI: n = 1)'`` when no interval exists."""
        if not self.has_interval:
            return f"{self.mean:{fmt}} (no CI: n = {self.n})"
        return f"{self.mean:{fmt}} +/- {self.half_width:{fmt}}"

    def to_dict(self) -> dict:
        """JSON-able dict; NaN (undefined half-width) becomes None."""
        def f(v):
            return None if math.isnan(v) else v
        return {"mean": f(self.mean), "half_width": f(self.half_width), "low": f(self.low),
                "high": f(self.high), "n": self.n, "level": self.level}


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
