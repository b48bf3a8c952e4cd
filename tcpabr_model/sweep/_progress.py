"""Progress of a sweep weighted by the points' expected costs, with an ETA that settles.

The bar advances by each finished point's *expected cost* (:func:`expected_cost`: for
a simulation, replications x simulated seconds), not by one per point, so that a sweep
mixing short and long points shows how much of the work is done.  The ETA is the cost
still to do at the rate measured *after* the first point of each worker (those include
numba compilation or cache loading, minutes on a busy machine, which made the first
ETA of a 5-minute ``reproduce --quick`` read almost two hours); until then it reads
``ETA after warm-up``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

__all__ = ["expected_cost", "Progress"]

#: Seconds per analysis time unit when a simulation point is given in the analysis'
#: units (``duration_units``): the paper's 5 ms (500-byte packets at 100 kB/s).
_UNIT_SECONDS = 0.005


def _num(params: Mapping, key: str, default: float) -> float:
    v = params.get(key, default)
    try:
        v = float(v)
    except (TypeError, ValueError):
        return default
    return v if math.isfinite(v) and v >= 0 else default


def expected_cost(method: str, params: Mapping, options: Mapping) -> float:
    """Relative cost of one point (only ratios within a sweep matter).

    ``simulation`` and ``network``: replications x (duration + warm-up) in simulated
    seconds (the simulators' cost is cells, proportional to simulated time at a given
    link rate); other methods: 1.  CHOICE: the link rate and the number of connections
    are not weighed (the same within a figure's sweep).
    """
    if method in ("simulation", "network"):
        reps = _num(params, "replications", _num(options, "replications", 10 if method == "simulation" else 4))
        if "duration_units" in params:
            secs = (_num(params, "duration_units", 4e5) + _num(params, "warmup_units", 4e3)) * _UNIT_SECONDS
        else:
            secs = _num(params, "duration", 2000.0) + _num(params, "warmup", 20.0)
        return reps * secs
    return 1.0


class Progress:
    """A tqdm bar over the expected cost of the pending points (see the module docstring)."""

    def __init__(self, costs: Mapping[int, float], desc: str, *, disable: bool, workers: int):
        if disable:  # tqdm.auto warns in Jupyter without ipywidgets, even for a disabled bar
            from tqdm import tqdm
        else:
            from tqdm.auto import tqdm

        self.costs = dict(costs)  # point index -> expected cost
        self.n = len(self.costs)
        self.total = float(sum(self.costs.values())) or 1.0
        self.done_cost = 0.0
        self.done = 0
        self.warm = max(1, min(workers, self.n - 1))  # completions that include the workers' warm-up
        self.t0 = time.monotonic()
        self.t_warm = None
        self.cost_at_warm = 0.0
        self.bar = tqdm(total=self.total, desc=desc, disable=disable, leave=False,
                        # our counts and ETA go in {unit}: tqdm's own ETA assumes equal points
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| {unit}", unit=self._text())

    def eta(self) -> float | None:
        """Seconds to go, or None before the warm-up completions."""
        if self.t_warm is None or self.done_cost <= self.cost_at_warm:
            return None
        rate = (self.done_cost - self.cost_at_warm) / max(time.monotonic() - self.t_warm, 1e-9)
        return (self.total - self.done_cost) / rate

    def update(self, i: int) -> None:
        """Point ``i`` (a key of ``costs``) finished."""
        c = self.costs[i]
        self.done += 1
        self.done_cost += c
        if self.done == self.warm:
            self.t_warm, self.cost_at_warm = time.monotonic(), self.done_cost
        self.bar.unit = self._text()
        self.bar.update(c)

    def _text(self) -> str:
        eta = self.eta()
        return (f"{self.done}/{self.n} pts, {_clock(time.monotonic() - self.t0)} elapsed, "
                + ("ETA after warm-up" if eta is None else f"ETA {_clock(eta)}"))

    def close(self) -> None:
        self.bar.close()


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"
