r"""Fit a K-level Markov capacity model to a measured trace, and report the fit.

Method (:func:`fit_trace`):

1. **Bin** the trace into epochs of ``epoch`` seconds (:func:`~._trace.bin_trace`); the
   capacity of epoch ``t`` is :math:`r_t` = opportunities / epoch, packets per second.
2. **Levels**: ``method="kmeans"`` (default) -- 1-D k-means (Lloyd,
   :func:`scipy.cluster.vq.kmeans2`) started from the K quantile-group means, each epoch
   assigned to the nearest level; ``method="quantile"`` -- the epochs split at the
   :math:`j/K` quantiles, each level the mean of its group; ``method="hmm"`` (optional
   extra ``hmmlearn``) -- a Gaussian hidden Markov model fitted by EM from the k-means
   levels, levels = state means, transition matrix = the HMM's, occupancy from the
   Viterbi path.  With ``outage=True`` empty epochs form their own level 0 (k-means and
   quantiles).  ``docs/traces.md`` compares the three methods on the shared traces.
3. **Transition matrix** (k-means, quantiles): maximum likelihood,
   :math:`\hat P_{ij} = n_{ij} / n_i` from the level sequence, counted **cyclically**
   (last epoch -> first) because the trace repeats; the counts then form a closed walk,
   so :math:`\hat P` is stochastic and irreducible and its stationary law is the
   occupancy.
4. **K**: given, or chosen among :math:`1..K_{\max}` (at most the number of distinct epoch capacities;
   from 2 where the outage level has epochs, issue 23 item 1c) by ``select="ec"`` (default: the smallest
   K whose effective-capacity error, see 5, is at most ``ec_tol``, else the K with the smallest error), by
   ``select="test"`` (the smallest K whose error is within the 95th percentile of the error of
   ``bootstrap`` paths of its own chain as long as the trace) or by
   ``select="bic"``: :math:`\mathrm{BIC} = -2\log L + p\log n`, :math:`p = K(K-1) + 2K`,
   with :math:`\log L` the likelihood of the level sequence under :math:`\hat P` plus a
   Gaussian emission :math:`N(c_k, \sigma_k^2)` per level; :math:`\sigma_k^2` is floored
   at the quantisation variance of a count, :math:`1/(12\epsilon^2)` (packets/s)^2, so
   that a level of identical epochs (an outage) has a finite likelihood (for ``"hmm"``,
   :math:`\log L` is the HMM's own likelihood).
5. **Report** (:class:`TraceFit`): level occupancy (trace) against :math:`\pi`; lag-1..L
   autocorrelation of :math:`r_t` against the chain's
   :math:`\mathrm{corr}(c_{X_0}, c_{X_l})`; and the effective capacity over a delta grid:
   empirical eq. (25) (all sliding blocks of ``block`` epochs,
   :func:`~tcpabr_model.closed_forms.effcap_estimate`) against the fitted chain's exact
   eq. (24) at the same block length (what eq. 25 estimates) and its eq. (23); the EC
   error is the largest gap over the grid divided by the mean rate.

Units: the model's time unit is the second (``time_unit = 1``), levels in packets per
second, ``epoch`` in seconds, ``packet_bytes`` from the trace (1500); ``delta`` per packet.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.cluster.vq import ClusterError, kmeans2

from .._validate import check_choice, check_int, check_real
from ..closed_forms import block_sums, effective_capacity, effective_capacity_eq24
from ..errors import ModelError
from ._model import CapacityModel
from ._order import ORDERS, previous_states, second_order_chain
from ._trace import BinnedTrace, Trace, _short, bin_trace, chain_path, read_trace

__all__ = ["TraceFit", "fit_trace", "fit_levels", "chain_autocorrelation", "trace_autocorrelation",
           "correlation_time", "regime_labels", "LEVEL_METHODS", "MAX_AUTO_STATES", "EC_TOL"]

LEVEL_METHODS = ("kmeans", "quantile", "hmm")
#: largest K tried when ``states`` is None
MAX_AUTO_STATES = 8
#: EM iterations and tolerance of method="hmm"
HMM_ITER, HMM_TOL = 300, 1e-4
#: the effective-capacity error (max |eq. 25 - eq. 24| / mean rate) that ``select="ec"`` asks for
EC_TOL = 0.05
#: regimes > 1: the share of a regime's epochs that must be empty for it to get an outage state
REGIME_OUTAGE_SHARE = 0.01
#: delta grid (per packet) = DELTA_DECADES / sd of the block sum, plus inf
DELTA_DECADES = tuple(10.0 ** np.linspace(-2.0, 2.0, 9))


@dataclass(frozen=True)
class TraceFit:
    """A fitted model and how well it fits.

    Attributes
    ----------
    model : CapacityModel
        Levels in packets/s, transition per epoch, ``time_unit = 1`` s.
    states, method, selection : int, str, str
        K; level method; ``"given"`` or ``"bic"``.
    epoch : float
        Seconds.
    n_epochs, dropped : int
        Whole epochs used; opportunities dropped in the final partial epoch.
    candidates : tuple of dict
        Per K tried: ``K``, ``loglik``, ``bic``, ``ec_error`` (max |empirical - fitted eq. 24|
        over the delta grid / mean rate).
    occupancy_trace, occupancy_model : tuple of float
        Fraction of epochs at each level; stationary distribution.
    acf_lags, acf_trace, acf_model : tuple
        Lags (epochs) and autocorrelations of the epoch capacity.
    block : int
        Block length M (epochs) of the effective-capacity comparison.
    ec_delta, ec_empirical, ec_fitted_eq24, ec_fitted_eq23 : tuple of float
        Delta grid (per packet, last = inf) and effective capacities, packets/s.
    ec_error : float
        max |ec_empirical - ec_fitted_eq24| / mean rate.
    mean_trace : float
        Mean capacity of the binned trace, packets/s (equals the model's mean).
    ec_error_sampling : tuple of float
        ``(median, 95th percentile)`` of the same EC error for ``bootstrap`` paths of the
        fitted chain as long as the trace (parametric bootstrap): what sampling alone gives
        when the chain is the truth; empty when ``bootstrap=0``.
    bootstrap : int
    regimes, regime_window, regime_of_state : int, float, tuple of int
        The two-timescale fit (``regimes > 1``, :func:`regime_labels`): the number of
        regimes, the smoothing window that defines them (seconds) and the regime of each of
        the K states (``()`` for one regime).
    order, base_of_state, previous_of_state : int, tuple of int, tuple of int
        ``order=2``: the chain on (previous, current) pairs (:mod:`._order`); the current
        and the previous first-order state of each of its states (``()`` for order 1).
    labels : numpy.ndarray
        The state of each whole epoch in the fit (not in :meth:`to_dict`).
    """

    model: CapacityModel
    states: int
    method: str
    selection: str
    epoch: float
    n_epochs: int
    dropped: int
    candidates: tuple
    occupancy_trace: tuple
    occupancy_model: tuple
    acf_lags: tuple
    acf_trace: tuple
    acf_model: tuple
    block: int
    ec_delta: tuple
    ec_empirical: tuple
    ec_fitted_eq24: tuple
    ec_fitted_eq23: tuple
    ec_error: float
    mean_trace: float
    ec_error_sampling: tuple = ()
    bootstrap: int = 0
    regimes: int = 1
    regime_window: float = 0.0
    regime_of_state: tuple = ()
    order: int = 1
    base_of_state: tuple = ()
    previous_of_state: tuple = ()
    labels: np.ndarray | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """JSON-ready dict (``inf`` written as the string ``"inf"``; the per-epoch ``labels``
        are left out)."""
        d = asdict(self)
        d.pop("labels", None)
        d["model"] = self.model.to_dict()
        d["ec_delta"] = [("inf" if math.isinf(x) else x) for x in self.ec_delta]
        d["levels"] = self.model.levels.tolist()
        d["levels_bits_per_second"] = self.model.bits_per_second.tolist()
        return d


def trace_autocorrelation(x, lags) -> np.ndarray:
    """Sample autocorrelation of ``x`` at ``lags`` (cyclic, as the trace repeats)."""
    y = np.asarray(x, dtype=float) - np.mean(x)
    v = float(y @ y)
    if v == 0.0:
        return np.full(len(lags), np.nan)
    return np.array([float(y @ np.roll(y, -int(l))) / v for l in lags])


def chain_autocorrelation(model: CapacityModel, lags) -> np.ndarray:
    """:math:`\\mathrm{corr}(c_{X_0}, c_{X_l})` of the stationary discrete chain at ``lags`` (epochs)."""
    P, _, _ = model.chain_per_epoch()
    c = np.asarray(model.levels)
    pi = np.asarray(model.stationary)
    m = float(pi @ c)
    var = float(pi @ (c - m) ** 2)
    if var == 0.0:
        return np.full(len(lags), np.nan)
    out = []
    v = c.copy()
    last = 0
    for l in lags:
        for _ in range(int(l) - last):
            v = P @ v
        last = int(l)
        out.append((float((pi * c) @ v) - m * m) / var)
    return np.array(out)


def _quantile_groups(x: np.ndarray, k: int) -> np.ndarray:
    """Labels 0..k-1 by the j/k quantiles of x (ties kept together, so groups may merge)."""
    cuts = np.quantile(x, np.arange(1, k) / k)
    return np.searchsorted(cuts, x, side="right")


def fit_levels(rates, states: int, method: str = "kmeans", *, outage: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Levels (increasing) and the level index of each epoch.

    With ``outage=True``, ``states >= 2`` and both empty and non-empty epochs present, the
    empty epochs (rate 0) form their own level 0 and the other ``states - 1`` levels are
    fitted to the non-empty epochs.  Raises ``ValueError`` when the data cannot support
    ``states`` distinct levels.
    """
    x = np.asarray(rates, dtype=float)
    k = check_int("states", states, 1)
    check_choice("method", method, ("kmeans", "quantile"))  # "hmm" fits levels and chain together
    zero = x == 0.0
    if outage and k >= 2 and zero.any() and not zero.all():
        try:
            lv, lb = fit_levels(x[~zero], k - 1, method, outage=False)
        except ValueError as exc:   # say it in the caller's count: k levels, one of them the outage
            raise ValueError(f"states={k} is invalid: with the outage level, the {k - 1} other levels must come "
                             f"from the non-empty epochs, and {str(exc).split(': ', 1)[-1]}") from None
        lab = np.zeros(x.size, np.int64)
        lab[~zero] = lb + 1
        return np.concatenate(([0.0], lv)), lab
    distinct = np.unique(x)
    if k > distinct.size:
        raise ValueError(f"states={k} is invalid: the trace has only {distinct.size} distinct epoch "
                         "capacities at this epoch length")
    lab = _quantile_groups(x, k)
    used = np.unique(lab)
    if method == "quantile":
        if used.size < k:
            raise ValueError(f"states={k} is invalid for method='quantile': ties leave only {used.size} "
                             "non-empty quantile groups; use method='kmeans'")
        levels = np.array([x[lab == j].mean() for j in range(k)])
        return levels, lab
    if distinct.size == k:  # one level per value: the optimal (zero-distortion) partition
        return distinct.astype(float), np.searchsorted(distinct, x)
    # k-means from the quantile-group means (distinct values fill merged groups)
    init = np.array([x[lab == j].mean() for j in used])
    if init.size < k:
        extra = distinct[~np.isin(distinct, init)]
        init = np.sort(np.concatenate([init, extra[np.linspace(0, extra.size - 1, k - init.size).astype(int)]]))
    try:
        cent, lab = kmeans2(x, init.astype(float), iter=100, minit="matrix", missing="raise")
    except ClusterError:
        raise ValueError(f"states={k} is invalid: k-means leaves a level without epochs on this trace; "
                         "use fewer states or method='quantile'") from None
    order = np.argsort(cent)
    rank = np.empty(k, np.int64)
    rank[order] = np.arange(k)
    lab = rank[lab]
    levels = np.array([x[lab == j].mean() for j in range(k)])
    return levels, lab


def correlation_time(x, max_lag: int) -> int:
    """The e-folding lag of ``x`` (epochs): the smallest lag at which its (cyclic) sample
    autocorrelation is at most 1/e, or ``max_lag`` if it stays above."""
    x = np.asarray(x, dtype=float)
    top = max(1, int(max_lag))
    if float(np.ptp(x)) == 0.0:
        return 1
    for start in range(1, top + 1, 64):   # in blocks: the e-fold is usually within the first
        lags = np.arange(start, min(start + 64, top + 1))
        below = np.nonzero(trace_autocorrelation(x, lags) <= 1.0 / math.e)[0]
        if below.size:
            return int(lags[below[0]])
    return top


def regime_labels(rates, regimes: int, window: int) -> tuple[np.ndarray, np.ndarray]:
    """The slow component of a capacity trace (two-timescale fit, issue 23 item 1b): the
    epoch rates smoothed by a centred moving average over ``window`` epochs (cyclic, as the
    trace repeats), split into ``regimes`` groups by 1-D k-means.  Returns the regimes'
    mean smoothed rates (increasing) and the regime of each epoch."""
    x = np.asarray(rates, dtype=float)
    n = x.size
    w = check_int("regime_window", window, 1, n)
    if w > 1:
        xx = np.concatenate([x[n - w // 2:], x, x[:w - w // 2 - 1]])
        smooth = np.convolve(xx, np.full(w, 1.0 / w), mode="valid")
    else:
        smooth = x.copy()
    try:
        return fit_levels(smooth, regimes, "kmeans", outage=False)
    except ValueError as exc:
        raise ValueError(f"regimes={regimes} is invalid: the capacity smoothed over {w} epochs cannot be split "
                         f"into {regimes} regimes ({str(exc).split(': ', 1)[-1]})") from None


def _build_regimes(binned: BinnedTrace, per_regime: int, method: str, outage: bool, regime: np.ndarray,
                   nreg: int):
    """The regime x level chain: ``per_regime`` levels fitted to each regime's epochs
    (:func:`fit_levels`, with its outage rule where at least :data:`REGIME_OUTAGE_SHARE` of
    the regime's epochs are empty), states ordered regime by regime, the
    transition matrix counted on the joint labels (cyclically, as for one regime)."""
    x = binned.rates
    lab = np.zeros(x.size, np.int64)
    levels, owner = [], []
    for g in range(nreg):
        m = regime == g
        # [choice] a regime gets its own outage state only where at least REGIME_OUTAGE_SHARE of
        # its epochs are empty; a stray empty epoch joins the regime's lowest level instead of
        # making a state fitted to one or two epochs
        own = outage and float(np.mean(x[m] == 0.0)) >= REGIME_OUTAGE_SHARE
        try:
            lv, lb = fit_levels(x[m], per_regime, method, outage=own)
        except ValueError as exc:
            raise ValueError(f"states={per_regime * nreg} is invalid with regimes={nreg}: in regime {g} "
                             f"{str(exc).split(': ', 1)[-1]}") from None
        lab[m] = lb + len(levels)
        levels.extend(float(v) for v in lv)
        owner.extend([g] * lv.size)
    k = len(levels)
    counts = _transition_counts(lab, k)
    if np.any(counts.sum(axis=1) == 0):
        raise ValueError(f"states={k} is invalid with regimes={nreg}: a state has no epoch")
    lv = np.asarray(levels)
    model = CapacityModel(lv, transition=counts / counts.sum(axis=1, keepdims=True), epoch=binned.epoch,
                          time_unit=1.0, packet_bytes=binned.packet_bytes)
    return model, lab, _loglik(x, lab, lv, counts, binned.epoch), tuple(owner)


def _transition_counts(lab: np.ndarray, k: int) -> np.ndarray:
    nxt = np.roll(lab, -1)  # cyclic: the trace repeats
    return np.bincount(lab * k + nxt, minlength=k * k).reshape(k, k).astype(float)


def _loglik(x, lab, levels, counts, epoch) -> float:
    k = levels.size
    P = counts / counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        ll_chain = float(np.sum(counts[counts > 0] * np.log(P[counts > 0])))
    floor = 1.0 / (12.0 * epoch * epoch)
    ll_emit = 0.0
    for j in range(k):
        xj = x[lab == j]
        var = max(float(np.mean((xj - levels[j]) ** 2)), floor)
        ll_emit += -0.5 * xj.size * math.log(2.0 * math.pi * var) - 0.5 * float(np.sum((xj - levels[j]) ** 2)) / var
    return ll_chain + ll_emit


def _ec_curves(binned: BinnedTrace, model: CapacityModel, block: int):
    sd = float(block_sums(binned.block_counts(block), block, sliding=True).std())
    deltas = [d / sd for d in DELTA_DECADES] if sd > 0 else [1.0]
    deltas = deltas + [math.inf]
    emp, f24, f23 = [], [], []
    for d in deltas:
        emp.append(binned.effective_capacity(block, d))
        f24.append(effective_capacity_eq24(model, d, block))
        f23.append(effective_capacity(model, d))
    return deltas, emp, f24, f23


def _ec_curves_at(binned: BinnedTrace, model: CapacityModel, block: int, trace: Trace):
    """:func:`_ec_curves`, its failure (eq. 23 underflows where the levels in packets per second
    are far apart, as they are at a very short epoch) named as the epoch's."""
    try:
        return _ec_curves(binned, model, block)
    except ModelError as exc:
        raise ValueError(f"epoch={binned.epoch!r} is invalid for {trace.name}: the fitted chain's effective "
                         f"capacity cannot be computed at this epoch ({' '.join(str(exc).split()).split('; ')[0]}); "
                         "use a longer epoch") from None


def _gap(emp, f24, mean: float) -> float:
    """The EC error: max |empirical eq. 25 - chain eq. 24| / mean rate."""
    return float(np.max(np.abs(np.asarray(emp) - np.asarray(f24)))) / mean


def _ec_error(binned: BinnedTrace, block: int, deltas, f24) -> float:
    return _gap([binned.effective_capacity(block, d) for d in deltas], f24, float(binned.rates.mean()))


def _sampling_ec_errors(model: CapacityModel, n: int, block: int, deltas, f24, draws: int, seed: int):
    """EC errors of ``draws`` stationary paths of ``model`` of ``n`` epochs (parametric bootstrap)."""
    rng = np.random.default_rng(seed)
    c = np.asarray(model.levels) * model.epoch
    out = []
    for _ in range(draws):
        counts = c[chain_path(model, n, rng)]
        if counts.sum() == 0:
            continue  # a path that never leaves an outage has no mean to scale by
        out.append(_ec_error(BinnedTrace(counts, model.epoch, 0, model.packet_bytes or 1), block, deltas, f24))
    return np.array(out)


def _build_hmm(binned: BinnedTrace, k: int) -> tuple[CapacityModel, np.ndarray, float]:
    """Gaussian HMM by EM (hmmlearn, optional): levels = state means, P = its transition matrix."""
    try:
        from hmmlearn.hmm import GaussianHMM  # optional extra: pip install 'tcpabr-model[hmm]'
    except ImportError:
        raise ValueError("method='hmm' is invalid here: it needs the optional package hmmlearn "
                         "(pip install 'tcpabr-model[hmm]')") from None
    x = binned.rates
    distinct = np.unique(x).size
    if k > distinct:
        raise ValueError(f"states={k} is invalid: the trace has only {distinct} distinct epoch "
                         "capacities at this epoch length")
    floor = 1.0 / (12.0 * binned.epoch**2)  # quantisation variance of a count, (packets/s)^2
    # EM started from the k-means fit (hmmlearn's own start can collapse every mean onto the
    # overall mean); start and transition probabilities from hmmlearn's default
    lv, lb = fit_levels(x, k, "kmeans", outage=False)
    h = GaussianHMM(n_components=k, covariance_type="diag", n_iter=HMM_ITER, tol=HMM_TOL, random_state=0,
                    min_covar=floor, init_params="st")
    h.means_ = lv.reshape(-1, 1)
    h.covars_ = np.array([[max(float(np.var(x[lb == j])), floor)] for j in range(k)])
    h.fit(x.reshape(-1, 1))
    order = np.argsort(h.means_.ravel())
    rank = np.empty(k, np.int64)
    rank[order] = np.arange(k)
    P = np.asarray(h.transmat_)[np.ix_(order, order)]
    levels = np.clip(h.means_.ravel()[order], 0.0, None)
    lab = rank[h.predict(x.reshape(-1, 1))]
    model = CapacityModel(levels, transition=P / P.sum(axis=1, keepdims=True), epoch=binned.epoch,
                          time_unit=1.0, packet_bytes=binned.packet_bytes)
    return model, lab, float(h.score(x.reshape(-1, 1)))


def _build(binned: BinnedTrace, k: int, method: str, outage: bool) -> tuple[CapacityModel, np.ndarray, float]:
    if method == "hmm":
        return _build_hmm(binned, k)
    x = binned.rates
    levels, lab = fit_levels(x, k, method, outage=outage)
    counts = _transition_counts(lab, k)
    model = CapacityModel(levels, transition=counts / counts.sum(axis=1, keepdims=True), epoch=binned.epoch,
                          time_unit=1.0, packet_bytes=binned.packet_bytes)
    return model, lab, _loglik(x, lab, levels, counts, binned.epoch)


def fit_trace(trace, states: int | None = None, epoch: float = 0.1, *, method: str = "kmeans",
              block: int = 10, max_lag: int = 20, max_states: int = MAX_AUTO_STATES, outage: bool = True,
              select: str = "ec", ec_tol: float = EC_TOL, bootstrap: int = 0, seed: int = 0,
              regimes: int = 1, regime_window: float | None = None, order: int = 1) -> TraceFit:
    """Fit a K-level discrete-time Markov capacity model to a trace and report the fit.

    Parameters
    ----------
    trace : Trace or str or path
        A :class:`~._trace.Trace` or a Mahimahi file to read.
    states : int >= 1, optional
        K; ``None`` chooses it by ``select`` among ``1..max_states`` (``2..`` with empty epochs and ``outage``).
    epoch : float > 0, optional(default=0.1)
        Epoch (bin) length, seconds.
    method : {"kmeans", "quantile", "hmm"}, optional(default="kmeans")
        ``"hmm"`` needs ``hmmlearn``; it ignores ``outage`` (an outage is whatever state
        has mean ~0) and its ``loglik``/``bic`` are the HMM's own likelihood.
    block : int >= 1, optional(default=10)
        Block length M (epochs) of the effective-capacity comparison (eqs. 24-25).
    max_lag : int >= 1, optional(default=20)
        Autocorrelation lags 1..max_lag (epochs).
    max_states : int >= 1, optional(default=8)
    outage : bool, optional(default=True)
        Empty epochs get their own level 0 (see :func:`fit_levels`).
    select : {"ec", "bic"}, optional(default="ec")
        How K is chosen when ``states`` is None: ``"ec"`` -- the smallest K whose
        effective-capacity error (max over the delta grid of |empirical eq. 25 - fitted
        eq. 24| / mean rate) is <= ``ec_tol``, else the K with the smallest error;
        ``"test"`` -- the smallest K whose error is <= the 95th percentile of the error
        that ``bootstrap`` paths of that K's own chain, as long as the trace, show
        (a parametric-bootstrap goodness-of-fit test; needs ``bootstrap > 0``);
        ``"bic"`` -- the smallest BIC.
    ec_tol : float > 0, optional(default=0.05)
    bootstrap : int >= 0, optional(default=0)
        Paths of the fitted chain, as long as the trace, whose EC error against the chain
        gives :attr:`TraceFit.ec_error_sampling` (the error sampling alone produces).
    seed : int >= 0, optional(default=0)
        Seed of the bootstrap paths.
    regimes : int >= 1, optional(default=1)
        Two-timescale fit (issue 23 item 1b, ``docs/traces.md`` sec. 4a): with ``regimes``
        R > 1 the epochs are first grouped into R regimes by their capacity smoothed over
        ``regime_window`` (:func:`regime_labels`), each regime gets its own ``K / R``
        levels (k-means or quantiles, outage rule per regime) and the chain runs on the
        (regime, level) pairs, so that it keeps the slow swings of the link that a chain
        fitted epoch by epoch forgets.  ``states`` is then the total K (a multiple of R);
        ``None`` tries ``R x 1 .. R x round(max_states / R)``.  Not with ``method="hmm"``.
        With ``regimes=1`` (default) the fit is the one-timescale fit, unchanged.
    regime_window : float > 0, optional
        Seconds (checked, and unused, with ``regimes=1``); default **[choice]** the e-folding
        time of the trace's autocorrelation at this epoch (:func:`correlation_time`, at least
        2 epochs, at most a quarter of the trace).
    order : {1, 2}, optional(default=1)
        2: the second-order chain (:func:`~._order.second_order_chain`: the states are the
        visited (previous, current) pairs of the fit's states, K chosen on the first-order
        chain, issue 23, ``docs/traces.md`` sec. 7.2x); the report (occupancy,
        autocorrelation, effective capacity) is then the pair chain's.

    Returns
    -------
    TraceFit
    """
    if not isinstance(trace, Trace):
        if not isinstance(trace, (str, bytes, os.PathLike)) or not os.fspath(trace):
            raise ValueError(f"trace={_short(trace)} is invalid: must be a Trace or the path of a Mahimahi trace "
                             "file (times in ms: Trace(times_ms))")
        trace = read_trace(trace)
    epoch = check_real("epoch", epoch, 0.0, low_open=True)
    if regime_window is not None:   # checked with one regime too, where it is unused
        check_real("regime_window", regime_window, 0.0, low_open=True)
    check_choice("method", method, LEVEL_METHODS)
    block = check_int("block", block, 1)
    max_lag = check_int("max_lag", max_lag, 1)
    max_states = check_int("max_states", max_states, 1, 64)
    check_choice("select", select, ("ec", "bic", "test"))
    ec_tol = check_real("ec_tol", ec_tol, 0.0, low_open=True)
    bootstrap = check_int("bootstrap", bootstrap, 0, 100_000)
    seed = check_int("seed", seed, 0)
    regimes = check_int("regimes", regimes, 1, 16)
    if check_int("order", order, min(ORDERS), max(ORDERS)) == 2 and regimes > 1:
        raise ValueError(f"order=2 is invalid with regimes={regimes}: the second-order chain is of the one-timescale "
                         "fit (give regimes=1)")
    if regimes > 1 and method == "hmm":
        raise ValueError("regimes=%d is invalid with method='hmm': the regimes are fitted with kmeans or quantile "
                         "levels (give regimes=1)" % regimes)
    if select == "test" and bootstrap == 0 and states is None:
        raise ValueError("bootstrap=0 is invalid with select='test': give the number of bootstrap paths (e.g. 100)")
    binned = bin_trace(trace, epoch)
    if block > binned.n_epochs:
        raise ValueError(f"block={block} is invalid: must be <= the {binned.n_epochs} epochs of the trace")
    x = binned.rates
    n = binned.n_epochs
    distinct = int(np.unique(x).size)
    regime, window_s, owner = None, 0.0, {}
    if regimes > 1:
        if regime_window is None:
            w = min(max(2, correlation_time(x, n // 4)), max(1, n // 4))
        else:
            w = max(1, int(round(check_real("regime_window", regime_window, 0.0, low_open=True) / epoch)))
            if w > n // 2:
                raise ValueError(f"regime_window={regime_window!r} is invalid: must be at most half the trace "
                                 f"({n // 2 * epoch:g} s at epoch={epoch:g})")
        _, regime = regime_labels(x, regimes, w)
        window_s = w * epoch
    if states is not None:
        ks = [check_int("states", states, 1)]
        if regimes > 1 and ks[0] % regimes:
            raise ValueError(f"states={states} is invalid with regimes={regimes}: must be a multiple of it "
                             "(the same number of levels in each regime)")
        selection = "given"
    elif regimes > 1:
        ks = [regimes * j for j in range(1, max(1, round(max_states / regimes)) + 1)]
        selection = select
    else:
        # empty epochs keep their level: one level would put them in its patterns, drawn epoch by epoch
        low = 2 if outage and method != "hmm" and 0 < int(np.count_nonzero(x == 0.0)) < n and max_states > 1 else 1
        ks = list(range(low, min(max_states, distinct) + 1))
        selection = select
    fits = {}
    candidates = []
    for k in ks:
        try:
            if regimes > 1:
                model, lab, ll, owner[k] = _build_regimes(binned, k // regimes, method, outage, regime, regimes)
            else:
                model, lab, ll = _build(binned, k, method, outage)
        except (ValueError, ModelError):
            if selection == "given" or method == "hmm" and k == ks[0]:
                raise
            continue  # e.g. quantile ties, or an HMM whose chain is reducible: this K cannot be fitted
        p = k * (k - 1) + 2 * k
        deltas, emp, f24, f23 = _ec_curves_at(binned, model, block, trace)
        err = _gap(emp, f24, float(x.mean()))
        row = {"K": k, "loglik": ll, "bic": -2.0 * ll + p * math.log(n), "ec_error": err}
        if selection == "test":
            errs = _sampling_ec_errors(model, n, block, deltas, f24, bootstrap, seed)
            if errs.size:
                row["ec_error_sampling"] = (float(np.median(errs)), float(np.quantile(errs, 0.95)))
        fits[k] = (model, lab, deltas, emp, f24, f23, err)
        candidates.append(row)
    if selection == "bic":
        best = min(candidates, key=lambda r: r["bic"])["K"]
    elif selection in ("ec", "test"):
        # "ec": within ec_tol; "test": within the 95th percentile of what sampling alone gives
        ok = [r["K"] for r in candidates
              if r["ec_error"] <= (r.get("ec_error_sampling", (0.0, -1.0))[1] if selection == "test" else ec_tol)]
        best = min(ok) if ok else min(candidates, key=lambda r: (r["ec_error"], r["K"]))["K"]
    else:
        best = candidates[0]["K"]
    model, lab, deltas, emp, f24, f23, err = fits[best]
    sampling = next(r.get("ec_error_sampling", ()) for r in candidates if r["K"] == best)
    base = prev = ()
    states = best
    if order == 2:   # the pair chain of the chosen K, reported as itself (its own bootstrap below)
        prev = tuple(int(b) for b in previous_states(lab, model.n_levels))
        model, lab, base = second_order_chain(model, lab)
        base = tuple(int(b) for b in base)
        deltas, emp, f24, f23 = _ec_curves_at(binned, model, block, trace)
        err, sampling, states = _gap(emp, f24, float(x.mean())), (), model.n_levels
    lags = list(range(1, max_lag + 1))
    occ = np.bincount(lab, minlength=states) / n
    if bootstrap and not sampling:  # only the chosen K
        errs = _sampling_ec_errors(model, n, block, deltas, f24, bootstrap, seed)
        if errs.size:
            sampling = (float(np.median(errs)), float(np.quantile(errs, 0.95)))
    return TraceFit(
        model=model, states=states, method=method, selection=selection, epoch=epoch, n_epochs=n,
        dropped=binned.dropped, candidates=tuple(candidates),
        occupancy_trace=tuple(occ.tolist()), occupancy_model=tuple(np.asarray(model.stationary).tolist()),
        acf_lags=tuple(lags), acf_trace=tuple(trace_autocorrelation(x, lags).tolist()),
        acf_model=tuple(chain_autocorrelation(model, lags).tolist()),
        block=block, ec_delta=tuple(deltas), ec_empirical=tuple(emp), ec_fitted_eq24=tuple(f24),
        ec_fitted_eq23=tuple(f23), ec_error=err, mean_trace=float(x.mean()),
        ec_error_sampling=sampling, bootstrap=bootstrap,
        regimes=regimes, regime_window=float(window_s), regime_of_state=owner.get(best, ()),
        order=order, base_of_state=base, previous_of_state=prev, labels=lab,
    )
