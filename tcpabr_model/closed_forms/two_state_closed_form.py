r"""Eq. 23 in closed form for the two-state chain (seed 004 Sec. IV), derived with sympy.

The chain :math:`P = [[1-p_{01}, p_{01}], [p_{10}, 1-p_{10}]]` serving :math:`c_0, c_1`
packets per slot: the Perron root of :math:`P\,\mathrm{diag}(e^{-\delta c_0},
e^{-\delta c_1})` is the ``+`` root of its characteristic polynomial
(:func:`derive_two_state_effective_capacity`), lambdified and evaluated with numpy
broadcasting over parameter grids (:func:`effective_capacity_two_state`), shifted so that
it is stable for large :math:`\delta`.
"""

from __future__ import annotations

import functools

import numpy as np

from .._validate import as_float_array, check_probability
from ..errors import ModelError, SolveError

__all__ = [
    "two_state_matrix",
    "derive_two_state_effective_capacity",
    "effective_capacity_two_state",
]


def two_state_matrix(p01, p10) -> np.ndarray:
    """``[[1-p01, p01], [p10, 1-p10]]`` after checking p01, p10 in (0, 1]."""
    a = check_probability("p01", p01, open_low=True)
    b = check_probability("p10", p10, open_low=True)
    return np.array([[1.0 - a, a], [b, 1.0 - b]])


@functools.lru_cache(maxsize=1)
def derive_two_state_effective_capacity():
    """Derive the two-state closed form of eq. (23) with sympy.

    Returns
    -------
    dict
        ``"Gamma"``: :math:`\\Gamma(\\delta)` as a sympy expression in ``p01, p10, c0, c1,
        delta``; ``"rho"``: the Perron root in terms of ``x0 = exp(-delta c0)``,
        ``x1 = exp(-delta c1)``; ``"rho_eigen"``: the same root as returned by sympy's
        eigenvalue solver (kept to show the derivation); ``"symbols"``: the symbols.

    Notes
    -----
    :math:`M = P\\,\\mathrm{diag}(x_0, x_1)`; its characteristic polynomial is
    :math:`\\lambda^2 - \\mathrm{tr}M\\,\\lambda + \\det M`, and the Perron root is the ``+``
    root.  The discriminant is rewritten as
    :math:`((1-p_{01})x_0-(1-p_{10})x_1)^2 + 4p_{01}p_{10}x_0x_1`, a sum of non-negative
    terms, so the numeric form never takes the square root of a negative rounding error.
    The rewriting is checked symbolically (``simplify(disc - disc_eigen) == 0``).
    """
    import sympy as sy

    p01, p10, c0, c1, delta = sy.symbols("p01 p10 c0 c1 delta", positive=True)
    x0, x1 = sy.symbols("x0 x1", positive=True)
    lam = sy.Symbol("lambda")
    P = sy.Matrix([[1 - p01, p01], [p10, 1 - p10]])
    M = P * sy.diag(x0, x1)
    charpoly = sy.expand(M.charpoly(lam).as_expr())
    roots = sy.solve(sy.Eq(charpoly, 0), lam)
    # the Perron root is the one with +sqrt: larger at a positive test point
    test = {p01: sy.Rational(1, 3), p10: sy.Rational(1, 5), x0: sy.Rational(1, 2), x1: sy.Rational(1, 7)}
    rho_eigen = max(roots, key=lambda r: float(r.subs(test)))
    tr = M.trace()
    det = sy.factor(M.det())
    disc = ((1 - p01) * x0 - (1 - p10) * x1) ** 2 + 4 * p01 * p10 * x0 * x1
    if sy.simplify(sy.expand(disc - (tr**2 - 4 * det))) != 0:  # pragma: no cover - derivation guard
        raise ModelError("two-state derivation: discriminant rewrite is not an identity")
    rho = (tr + sy.sqrt(disc)) / 2
    if sy.simplify(sy.expand((rho - rho_eigen).subs(test))) != 0:  # pragma: no cover
        raise ModelError("two-state derivation: Perron root does not match sympy's eigenvalue")
    gamma = -sy.log(rho.subs({x0: sy.exp(-delta * c0), x1: sy.exp(-delta * c1)})) / delta
    return {
        "Gamma": gamma,
        "rho": rho,
        "rho_eigen": rho_eigen,
        "symbols": {"p01": p01, "p10": p10, "c0": c0, "c1": c1, "delta": delta, "x0": x0, "x1": x1},
    }


@functools.lru_cache(maxsize=1)
def _rho_two_state_numeric():
    """Lambdified Perron root rho(p01, p10, x0, x1) from the sympy derivation."""
    import sympy as sy

    d = derive_two_state_effective_capacity()
    s = d["symbols"]
    return sy.lambdify((s["p01"], s["p10"], s["x0"], s["x1"]), d["rho"], modules="numpy")


def effective_capacity_two_state(p01, p10, c0, c1, delta):
    """Closed-form eq. (23) for the two-state chain, vectorised (numpy broadcasting).

    Uses the lambdified sympy derivation (:func:`derive_two_state_effective_capacity`),
    evaluated with the shift :math:`x_i = e^{-\\delta(c_i - c_{\\min})}` so that it is
    stable for large delta: :math:`\\Gamma = c_{\\min} - \\log\\rho(x_0, x_1)/\\delta`
    (and, where that underflows -- the minimum state has no self-loop -- with the mid-point
    shift :math:`\\bar c = (c_0 + c_1)/2`, using that rho is homogeneous of degree 1).

    Parameters
    ----------
    p01, p10 : array_like(float), in (0, 1]
        Transition probabilities per slot (state 0 -> 1 and 1 -> 0).
    c0, c1 : array_like(float) >= 0
        Packets served per slot in states 0 and 1.
    delta : array_like(float) >= 0
        ``0`` gives the mean, ``inf`` the minimum cycle mean.

    Returns
    -------
    float or ndarray
        Effective capacity in packets per slot.
    """
    names = ("p01", "p10", "c0", "c1", "delta")
    arrays = [as_float_array(n, v) for n, v in zip(names, (p01, p10, c0, c1, delta))]
    try:
        a, b, c0a, c1a, da = np.broadcast_arrays(*arrays)
    except ValueError:
        shapes = ", ".join(f"{n}: {x.shape}" for n, x in zip(names, arrays))
        raise ValueError(f"p01/p10/c0/c1/delta shapes are invalid: must broadcast together ({shapes})") from None
    scalar = a.ndim == 0
    for name, v, lo_open in (("p01", a, True), ("p10", b, True)):
        if not np.all(np.isfinite(v)) or np.any(v <= 0) or np.any(v > 1):
            bad = float(v[~(np.isfinite(v) & (v > 0) & (v <= 1))].ravel()[0]) if v.ndim else float(v)
            raise ValueError(f"{name}={bad!r} is invalid: must be in (0, 1]")
    for name, v in (("c0", c0a), ("c1", c1a)):
        if not np.all(np.isfinite(v)) or np.any(v < 0):
            raise ValueError(f"{name}={float(v.ravel()[np.argmin(np.isfinite(v) & (v >= 0))])!r} is invalid: "
                             "must be >= 0")
    if np.any(np.isnan(da)) or np.any(da < 0):
        bad = float(da.ravel()[np.argmax(np.isnan(da.ravel()) | (da.ravel() < 0))])
        raise ValueError(f"delta={bad!r} is invalid: must be >= 0 (inf allowed)")
    cmin = np.minimum(c0a, c1a)
    mean = (b * c0a + a * c1a) / (a + b)
    # Gamma(inf): min cycle mean = cmin if the min state has a self-loop, else the 2-cycle mean
    self_loop_min = np.where(c0a <= c1a, a < 1, b < 1)
    g_inf = np.where(self_loop_min, cmin, 0.5 * (c0a + c1a))
    rho_fn = _rho_two_state_numeric()
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        dfin = np.where(np.isfinite(da) & (da > 0), da, 1.0)
        # rho is homogeneous of degree 1 in (x0, x1): evaluate with two shifts and keep
        # the finite one.  Shift by c_min (x in (0, 1]) fails only when the min state has
        # no self-loop and the other x underflows; the mid-point shift fails only when
        # delta |c0 - c1| / 2 overflows exp.
        x0 = np.exp(-dfin * (c0a - cmin))
        x1 = np.exp(-dfin * (c1a - cmin))
        val_min = cmin - np.log(rho_fn(a, b, x0, x1)) / dfin
        cbar = 0.5 * (c0a + c1a)
        y0 = np.exp(-dfin * (c0a - cbar))
        y1 = np.exp(-dfin * (c1a - cbar))
        val_mid = cbar - np.log(rho_fn(a, b, y0, y1)) / dfin
        val = np.where(np.isfinite(val_min), val_min, val_mid)
        # both shifts fail only if the min state has no self-loop (p = 1) and
        # delta |c0 - c1| > ~1418: with u = exp(-delta (c_max - c_min)), q = p01 p10 and
        # s = the other state's self-loop probability, the Perron root is
        # rho = sqrt(u) (s sqrt(u) + sqrt(s^2 u + 4 q)) / 2  (same expression, sqrt(u) factored)
        bad = ~np.isfinite(val)
        if np.any(bad):
            L = dfin * np.abs(c0a - c1a)
            s_other = np.where(c0a <= c1a, 1.0 - b, 1.0 - a)
            su = np.exp(-0.5 * L)
            log_rho = -0.5 * L + np.log(0.5 * (s_other * su + np.sqrt(s_other**2 * su * su + 4.0 * a * b)))
            val = np.where(bad, cmin - log_rho / dfin, val)
    val = np.where(da == 0, mean, np.where(np.isinf(da), g_inf, val))
    if np.any(~np.isfinite(val)):
        raise SolveError("two-state effective capacity underflowed; use delta=inf for the limit")
    return float(val) if scalar else val
