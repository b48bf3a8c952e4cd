"""Frame admission (drop) policies of a port's class queue (private, numba).

Each policy is one small pure function of the buffer state seen by the *first cell of a
frame* (``X`` cells in the class queue, ``X_i`` of them from the arriving cell's VC,
``N_a`` VCs with at least one cell queued, buffer ``K``) and returns True to admit the
frame.  A rejected frame is dropped whole: the first cell and every later cell of the
frame (the kernel keeps a per-(VC, port) discard flag until the end-of-message cell).
Independently of the policy, a cell that finds the buffer full (``X >= K``) is dropped;
every policy except ``POL_TAIL`` then also discards the rest of that frame (partial
packet discard, PPD).  :func:`frame_admit` dispatches on the integer policy id.

Sources of the formulas (see ``docs/network.md``):

* tail drop, PPD, EPD: seed 000 Sec. 2.2; seed 001 Sec. 2.2 (EPD_th = K - b x MTU).
* Selective Drop and Fair Buffer Allocation: seed 000 Sec. 2.2 names them ("when the
  buffer occupancy exceeds a preset threshold, complete packets are dropped from
  connections that are using more buffer than others"); the formulas are those of its
  ref. [9] (Goyal et al., ICC'97) and of Heinanen & Kilkki (seed 001 ref. [14]):
  SD drops when ``X > R`` and ``X_i N_a / X > Z``; FBA drops when ``X > R`` and
  ``X_i N_a / X > Z (K - R) / (X - R)``.
* GFR: seed 002 Section 4 pseudocode, verbatim (:func:`gfr_admit`).
* THRESH: seed 002 Section 3 ("drops a single TCP packet from a connection every time
  the connection's buffer occupancy crosses a given threshold"): the first frame that
  finds ``X_i >= R_i`` while the VC is armed is dropped and the VC disarmed; it is armed
  again by a frame arriving with ``X_i < R_i``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..arrays.layout import POL_EPD, POL_FBA, POL_GFR, POL_SD

__all__ = ["epd_admit", "sd_admit", "fba_admit", "gfr_admit", "frame_admit", "uniform01"]


@njit(cache=True, error_model="numpy")
def epd_admit(x, r):
    """Early packet discard: admit a new frame iff ``X < R``."""
    return x < r


@njit(cache=True, error_model="numpy")
def sd_admit(x, xi, na, r, z):
    """Selective Drop: reject iff ``X > R`` and ``X_i N_a / X > Z``."""
    if x > r and x > 0 and na > 0:
        return not (xi * na / x > z)
    return True


@njit(cache=True, error_model="numpy")
def fba_admit(x, xi, na, k, r, z):
    """Fair Buffer Allocation: reject iff ``X > R`` and ``X_i N_a / X > Z (K - R) / (X - R)``."""
    if x > r and x > 0 and na > 0:
        return not (xi * na / x > z * (k - r) / (x - r))
    return True


@njit(cache=True, error_model="numpy")
def gfr_admit(x, xi, r, ri, z, wi, tagged, u):
    """Seed 002 Section 4, verbatim::

        IF (X_i < R_i AND X < R) THEN accept
        ELSE IF (X < R) AND (X_i < Z R_i) AND (cell NOT tagged)
                AND (u > W_i (X_i - R_i) / (R_i (Z - 1))) THEN accept
        ELSE drop
    """
    if xi < ri and x < r:
        return True
    if x < r and xi < z * ri and not tagged and u > wi * (xi - ri) / (ri * (z - 1.0)):
        return True
    return False


@njit(cache=True, error_model="numpy")
def frame_admit(pol, x, xi, na, k, r, z, ri, wi, tagged, u):
    """Dispatch on the policy id (``POL_*``); True admits the frame.

    ``POL_TAIL``, ``POL_PPD`` admit every frame (they act only on overflow);
    ``POL_THRESH`` keeps per-VC state and is handled by the kernel.
    """
    if pol == POL_EPD:
        return epd_admit(x, r)
    if pol == POL_SD:
        return sd_admit(x, xi, na, r, z)
    if pol == POL_FBA:
        return fba_admit(x, xi, na, k, r, z)
    if pol == POL_GFR:
        return gfr_admit(x, xi, r, ri, z, wi, tagged, u)
    return True


@njit(cache=True, error_model="numpy")
def uniform01(key, counter):
    """Uniform(0, 1) from a counter-based generator (splitmix64 of key + counter).

    Deterministic, so the GFR drop lottery is reproducible from the replication's seed
    without a random-number array.
    """
    z = np.uint64(key) + np.uint64(counter) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)) * (1.0 / 9007199254740992.0)
