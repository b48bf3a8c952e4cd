"""Stationary distribution of the embedded chain X_k, by several methods.

``structured`` (default) uses the chain's structure (docs/model.md, section 8) and is
exact: substitutions over the loss-free part plus one dense solve on the loss events.
The general methods (``sparse-direct``, ``dense``, ``power``, ``quantecon``) take the
assembled matrix and are kept as baselines and cross-checks.  Every method's answer
is checked: pi >= 0, sum 1, and the residual ||pi P - pi||_1 below ``tol``; otherwise
:class:`~tcpabr_model.errors.SolveError` is raised.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import ErgodicityError, SolveError
from ..runtime.blas import SOLVE_BLAS_THREADS, blas_threads
from ..runtime.progress import LazyBar
from . import estimate
from .blocks import iterative_blocks, renumbered, sparse_blocks
from .kernels.assemble import from_first_serving, rate_law_powers
from .kernels.classes import factored_leaving, factored_scc, leaving_classes, structural_self_loops
from .kernels.recovery import code_m, code_u
from .kernels.structured import (backward_h, entry_vector, event_kernel, event_mass, forward_pi,
                          forward_pi_prepared, has_closed_lossfree_class, left_lossfree, loss_events,
                          prepare_forward)
from .skeleton import Skeleton
from .service import regeneration_law

__all__ = ["METHODS", "StationarySolution", "stationary_distribution", "residual"]

METHODS = ("structured", "structured-direct", "sparse-direct", "dense", "power", "quantecon")
DEFAULT_TOL = 1e-11
DENSE_LIMIT = 20_000  # states; beyond this dense methods would need > 3 GB
GMRES_RTOL = 1e-12  # relative residual of the loss-event system (above its rounding floor)
#: SCC blocks of at least this many states are factored sparse (SuperLU through scipy's
#: ``splu``) instead of inverted dense by the matrix-free solve (K > 2; docs/model.md sec. 5a
#: item 8) [choice, measured]: the blocks are sparse (4-10 nonzeros per row) and SuperLU's
#: factors beat the dense inverse from about 32 states (mean per block over the blocks of three
#: study chains, one BLAS thread, ``SPARSE_LU_OPTIONS``: 32-63 states 0.06 ms against 0.09 ms,
#: 64-127 0.11 against 0.32, 128-255 0.18 against 1.1, 256-511 0.40 against 6.4, 512-1023 0.70
#: against 22; L + U hold 5-7 % of the k^2 entries of an inverse from 256 states), but the
#: INSTCAP chains' block sizes are bimodal (blocks of <= 15 states, one or two of 64-255, then
#: tens to hundreds of 256-2,719 that carry all of ``sum k^3``), so 256 keeps the dense
#: inverse, and the bits, of every chain whose blocks stay below 256 states (every stored
#: bit-for-bit reference, the largest a 167-state block at 43,385 states) for about 1 ms per
#: 128-255-state block.
SPARSE_BLOCK_FROM = 256
#: ``splu`` options of those blocks [measured]: Verizon-LTE half A, B_max 12 (140 blocks of
#: 286-2,719 states): the block's order without pivoting factors in 0.9 s with 2.2e7 entries in
#: L + U, COLAMD (scipy's default) in 1.5 s with 3.2e7, MMD on A^T + A in 3.8 s with 1.7e7.
SPARSE_LU_OPTIONS = {"permc_spec": "NATURAL", "diag_pivot_thresh": 0.0}
#: blocks of at least this many states are ordered by minimum degree on A^T + A instead
#: (``SPARSE_LU_OPTIONS_LARGE``; still no pivoting: a symmetric permutation of a column
#: diagonally dominant M-matrix is one) [measured]: TMobile-UMTS half A, RTT 100 ms, B_max 39,
#: INSTCAP (2,465,849 states; 165 blocks of 13,064 states, one per window, hold 2.0e6 of
#: them): per block the natural order fills L + U with 1.04e7 entries in 1.45 s, COLAMD 8.9e6
#: in 0.96 s, MMD on A^T + A 3.7e6 in 0.47 s; the natural order's 20 GB of factors killed the
#: analysis.  Below it the natural order stays (the blocks of up to 2,719 states measured
#: above, and every chain's numbers unchanged).
SPARSE_MMD_FROM = 4096
SPARSE_LU_OPTIONS_LARGE = {"permc_spec": "MMD_AT_PLUS_A", "diag_pivot_thresh": 0.0}
#: SCC blocks of at least this many states are solved by GMRES preconditioned by their ILU(0)
#: at every product (blocks.py, kernels/iterative.py) instead of factored once by SuperLU
#: (docs/model.md sec. 8, "Large blocks") [choice, measured]: SuperLU's fill grows with the block
#: (120 entries per row at 4,391 states, 350 at 17,044) while ILU(0) keeps the block's own
#: entries, and 14-40 GMRES steps per block and product cost less than the factorisation even
#: at 256-2,719 states: Verizon-LTE half A, 50 ms, B_max 12 (583,329 states, 14 products),
#: solve 2.9 s / 0.50 GB peak against 4.1-4.4 s / 0.95 GB with SuperLU; TMobile-UMTS half A,
#: 50 ms, B_max 19 (454,713 states, 16 products, 87 blocks of 256-4,391 states) 8.6 s / 0.46
#: GB against 14.6 s / 1.47 GB.  So every block from SPARSE_BLOCK_FROM on; SuperLU stays the
#: fallback where a block's GMRES does not converge.
ITERATIVE_FROM = 256
#: GMRES steps between restarts of a block's solve
BLOCK_GMRES_RESTART = 40
#: normwise backward error of each block's solve (kernels/iterative.py ``block_gmres``)
#: [choice]: above the rounding floor of a residual computed over rows of up to 50 entries
#: (about 50 eps = 5.6e-15; at 1e-14 a block of 12,184 states of a TMobile-LTE study chain failed in a product), far below
#: what the chain's residual ||pi P - pi||_1 <= 1e-11, checked after the solve, asks
BLOCK_GMRES_RTOL = 1e-13
#: restarts before a block's solve counts as failed (then SuperLU factors that block)
BLOCK_GMRES_MAX_RESTARTS = 20
#: inexact products of the loss-event GMRES (docs/model.md sec. 5a item 13) [choice, measured]:
#: after an outer step whose relative residual is ``r``, the blocks' GMRES of the next product
#: stops at ``RELAX_FACTOR * GMRES_RTOL / r`` (Simoncini and Szyld 2003; Bouras and Fraysse
#: 2005: a product's error may grow as the residual falls), never below ``BLOCK_GMRES_RTOL`` nor
#: above ``RELAX_MAX``; the first product, the true residual of a restart and the product that
#: gives pi are exact (``BLOCK_GMRES_RTOL``).  A product's error measured at about 4x the
#: blocks' tolerance, so 0.1 keeps each perturbation below 0.4 GMRES_RTOL / r.  None: off.
RELAX_FACTOR: float | None = 0.1
RELAX_MAX = 1e-6
#: chains of at most this many states are solved on a copy of T's arrays with the states numbered in
#: the SCC order (``blocks.renumbered``: the same bits, products about 2x faster) [choice]: the copy
#: (22-61 MB at the study's chains of 0.15-0.58 million states) is not in ``estimate.check_fits``
RENUMBER_MAX_STATES = 1_000_000


@dataclass(frozen=True)
class StationarySolution:
    pi: np.ndarray
    residual: float
    method: str
    seconds: float
    iterations: int = 0


def residual(pi: np.ndarray, P: sp.csr_matrix) -> float:
    """||pi P - pi||_1."""
    return float(np.abs(P.T @ pi - pi).sum())


def _normalised(pi: np.ndarray, method: str) -> np.ndarray:
    """``pi`` clipped at 0 and summed to 1; raises on non-finite values or real negative mass."""
    if not np.all(np.isfinite(pi)):
        raise SolveError(f"{method}: the stationary solve produced non-finite values")
    if pi.min() < -1e-12 * max(pi.max(), 1.0):
        raise SolveError(f"{method}: the stationary solve produced negative mass {pi.min():.3g}")
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def _check(pi: np.ndarray, P, tol: float, method: str) -> tuple[np.ndarray, float]:
    pi = _normalised(pi, method)
    res = residual(pi, P)
    if not res <= tol:
        raise SolveError(f"{method}: residual ||pi P - pi||_1 = {res:.3g} exceeds tol={tol:.1g}")
    return pi, res


class _Structure:
    """psi-independent data of the structured solver, cached on the skeleton.

    Only O(states) arrays and one int32 per loss entry (the event index) are added to the
    skeleton: L_E is the skeleton's ``ls_ptr`` / ``ls_prob`` with those indices, and T is
    read from the skeleton by the kernels (docs/model.md sec. 8, memory).
    """

    def __init__(self, sk: Skeleton):
        n = sk.n_states
        # structural loss-free graph: every possible next level of every (x, N) entry
        nlev = sk.n_levels
        # (the structural graph: every next level, no loss entries, no events)
        self.order, self.ptr = factored_scc(sk.states, sk.nl_ptr, sk.nl_t, np.ones((nlev, nlev)),
                                            np.zeros(n + 1, dtype=np.int64), np.empty(0, dtype=np.int32),
                                            np.zeros(1, dtype=np.int64), np.empty(0, dtype=np.int64))
        sizes = np.diff(self.ptr)
        comp = np.empty(n, dtype=np.int64)
        comp[self.order] = np.repeat(np.arange(sizes.size), sizes)
        pos = np.empty(n, dtype=np.int64)
        pos[self.order] = np.arange(n) - np.repeat(self.ptr[:-1], sizes)
        self.comp = comp
        self.pos = pos
        self.mmax = sk.reg.shape[0] - 1
        self.n_codes = sk.n_codes    # loss-event codes: the windows m, and fast recovery's (sec. 12)
        self.n_events = nlev * self.n_codes
        # L_E in CSR: the skeleton's pointers and probabilities, event indices as int32
        self.e_ptr, self.e_val = sk.ls_ptr, sk.ls_prob
        self.e_idx = loss_events(sk.states, sk.ls_ptr, sk.ls_m, nlev)
        self.active = np.flatnonzero(np.bincount(self.e_idx, minlength=self.n_events))
        self.max_scc = int(np.diff(self.ptr).max())
        self.closed = None    # (Q's pattern, G's rows and columns, closed classes): _closed_count
        # the SCCs that can be closed, whatever Q: their loss mass alone may not be an exit
        # (has_closed_lossfree_class's test is <= 1e-14; 2e-14 leaves room for the order of the
        # sum), and a singleton only with an entry back to itself (else its whole row leaves it)
        self.looped = structural_self_loops(sk.states, sk.nl_ptr, sk.nl_t, nlev)
        lossless = np.add.reduceat(sk.p_loss[self.order], self.ptr[:-1]) <= 2e-14
        self.lossless = np.flatnonzero(lossless & ((sizes > 1) | self.looped[self.order[self.ptr[:-1]]]))
        self._renumbered = None   # blocks.renumbered

    def event_mass(self, pi: np.ndarray) -> np.ndarray:
        """lambda = pi L_E (all events)."""
        return event_mass(pi, self.e_ptr, self.e_idx, self.e_val, self.n_events)


_STRUCT_CACHE: "weakref.WeakKeyDictionary[Skeleton, _Structure]" = weakref.WeakKeyDictionary()


def _structure(sk: Skeleton) -> _Structure:
    """The psi-independent solver data of ``sk``, computed once and freed with it."""
    st = _STRUCT_CACHE.get(sk)
    if st is None:
        st = _STRUCT_CACHE[sk] = _Structure(sk)
    return st


def _classes(P: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(label of each state's communicating class, which classes are closed), read from
    P's CSR arrays without copying them."""
    from scipy.sparse.csgraph import connected_components

    nc, lab = connected_components(P, directed=True, connection="strong")
    return lab, ~leaving_classes(P.indptr, P.indices, P.data, lab, nc)


def closed_classes(P: sp.csr_matrix) -> int:
    """Number of closed communicating classes of P (1 for a chain with a unique pi)."""
    return int(_classes(P)[1].sum())


def _reference_index(P: sp.csr_matrix, steps: int = 200) -> int:
    """A recurrent state of large stationary mass (argmax, over the closed class, after a
    few power steps): fixing a transient state's component would make the reduced system
    singular (which the power steps alone did not exclude for a nearly periodic chain,
    psi close to 1, whose only closed class is loss-free)."""
    n = P.shape[0]
    x = np.full(n, 1.0 / n)
    PT = P.T.tocsr()
    for _ in range(steps):
        x = PT @ x
    lab, closed = _classes(P)
    rec = np.flatnonzero(closed[lab])
    return int(rec[np.argmax(x[rec])])


def _reduced_solve_dense(M: np.ndarray, ref: int) -> np.ndarray:
    """Solve x M = 0 with x[ref] = 1 by dropping ref's row and column (M = I - K)."""
    n = M.shape[0]
    keep = np.r_[0:ref, ref + 1:n]
    A = M.T[np.ix_(keep, keep)]
    b = -M.T[keep, ref]
    x = np.empty(n)
    x[ref] = 1.0
    x[keep] = np.linalg.solve(A, b)
    return x


def _structured_krylov(sk: Skeleton, Q: np.ndarray, progress: bool = False, prepared: bool = False,
                       info: dict | None = None, start: np.ndarray | None = None):
    """Loss-event equation lambda = lambda K_E solved by GMRES; each product lambda K_E is
    one exact forward substitution over the loss-free part (O(nnz)), which is read from
    the skeleton (T is not stored)."""
    s = _structure(sk)
    t_args = (sk.states, sk.nl_ptr, sk.nl_prob, sk.nl_t, Q)
    if len(s.active) == 0 or has_closed_lossfree_class(s.order, s.ptr, s.comp, *t_args, sk.p_loss, s.lossless):
        return None, 0  # a loss-free closed class: the regenerative reduction does not apply
    if not prepared:
        return _event_gmres(sk, Q, s, lambda nu: forward_pi(nu, s.order, s.ptr, *t_args, s.comp, s.pos), progress)
    # K > 2 (matrix-free path): the SCC blocks inverted (below SPARSE_BLOCK_FROM states) or
    # their ILU(0) computed once for all the GMRES products
    forward = _PreparedForward(s, t_args, sk)
    out = _event_gmres(sk, Q, s, forward, progress, start)
    if info is not None:
        info["superlu_blocks"] = int(forward.use_lu.sum())
    return out


class _PreparedForward:
    """``pi = nu (I - T)^{-1}`` with the blocks prepared once (:func:`forward_pi_prepared`):
    dense inverses below ``SPARSE_BLOCK_FROM`` states, ILU(0) and GMRES from ``ITERATIVE_FROM``,
    SuperLU's factors in between and for the blocks whose ILU(0) or GMRES fails a first solve
    (:func:`.blocks.iterative_blocks`).  A block whose GMRES fails in a product is factored
    by SuperLU and the product done again (the solution's ``method`` counts these blocks)."""

    def __init__(self, s: _Structure, t_args: tuple, sk: Skeleton | None = None):
        # up to RENUMBER_MAX_STATES, on the states renumbered in the SCC order (blocks.renumbered)
        self.order = s.order if sk is not None and sk.n_states <= RENUMBER_MAX_STATES else None
        if self.order is not None:
            s, t = renumbered(s, sk)
            t_args = t + t_args[4:]
        self.s, self.t_args = s, t_args
        self.sparse_from = max(int(SPARSE_BLOCK_FROM), 2)
        sizes = np.diff(s.ptr)
        self.big = sizes >= max(int(ITERATIVE_FROM), self.sparse_from)
        self.it, self.it_blocks, self.use_lu = _iterative_blocks(s, t_args, self.big)
        self.dense = prepare_forward(s.order, s.ptr, *t_args, s.comp, s.pos, self.sparse_from, s.looped)
        self.small_lu = (sizes >= self.sparse_from) & ~self.big
        self._pack()

    def set_rtol(self, rtol: float) -> None:
        """The blocks' GMRES tolerance of the next products (item 13 of docs/model.md sec. 5a)."""
        if rtol != self.it[-2]:
            self.it = self.it[:-2] + (float(rtol), self.it[-1])
            self.factors = self.factors[:-1] + (self.it,)

    def _pack(self) -> None:
        pick = self.small_lu.copy()
        pick[self.it_blocks[self.use_lu]] = True
        lu = _sparse_blocks(self.s, self.t_args, pick)
        ok = ~self.use_lu
        lu[0][self.it_blocks[ok]] = -2 - np.flatnonzero(ok)
        self.factors = self.dense + lu + (self.it,)

    def __call__(self, nu: np.ndarray) -> np.ndarray:
        s = self.s
        if self.order is not None:
            nu = nu[self.order]
        while True:
            pi, its = forward_pi_prepared(nu, s.order, s.ptr, *self.t_args, s.comp, *self.factors)
            if its >= 0:
                if self.order is not None:
                    pi[self.order] = pi.copy()    # back to the skeleton's numbering
                return pi
            self.use_lu[-1 - its] = True
            self._pack()


def _event_gmres(sk: Skeleton, Q: np.ndarray, s: _Structure, forward, progress: bool,
                 start: np.ndarray | None = None):
    """GMRES on the loss-event system, each product one forward substitution ``forward(nu)``;
    ``start``: a loss-event law (all ``s.n_events``) to start from instead of the uniform one
    (docs/model.md sec. 19: the previous cap's, :func:`event_start`)."""
    n = sk.n_states
    act = s.active
    na = len(act)
    lam_full = np.zeros(s.n_events)
    F = regeneration_law(sk.outage_wait)      # docs/model.md sec. 15c, once for every product
    calls = [0]
    bar = LazyBar(progress, "solving (GMRES products)", "product", estimate.PROGRESS_AFTER_SECONDS)

    relax = RELAX_FACTOR is not None and hasattr(forward, "set_rtol")
    outer = [1.0]     # the outer GMRES's last relative residual (its callback)

    def left_K(v_act, exact=True):
        if relax:
            forward.set_rtol(BLOCK_GMRES_RTOL if exact else
                             min(max(RELAX_FACTOR * GMRES_RTOL / max(outer[0], 1e-300), BLOCK_GMRES_RTOL), RELAX_MAX))
        lam_full[:] = 0.0
        lam_full[act] = v_act
        pi = forward(entry_vector(lam_full, sk.reg, s.mmax, n, sk.constant_s, Q, s.n_codes, F))
        calls[0] += 1
        bar.update()
        return s.event_mass(pi)[act], pi

    # lambda (I - K_E) = 0, sum(lambda) = 1, as one nonsingular system: with x = lambda^T,
    # (I - K_E^T + v 1^T) x = v for v uniform (1 is the left null vector of I - K_E^T, so
    # the rank-one term removes the singularity without choosing a reference event).
    v = np.full(na, 1.0 / na)

    last = [None, None]   # the last exact product's x and pi

    def op(x):
        # inexact (item 13) but for the residual of x0 and the true residual that ends the cycle
        exact = not relax or calls[0] == 0 or outer[0] <= 10.0 * GMRES_RTOL
        mass, pi = left_K(x, exact)
        if exact:
            last[0], last[1] = x.copy(), pi
        return x - mass + v * x.sum()

    def watch(res):
        outer[0] = float(res)

    A = spla.LinearOperator((na, na), matvec=op, dtype=float)
    # GMRES_RTOL, not lower: the products are exact only to rounding, and the relative
    # residual of this system stalls at 1e-14..1e-13 (docs/model.md sec. 8); asking for
    # 1e-14 made GMRES run to maxiter on the rounding noise (hundreds of products, erratic
    # with the chain's size).  The full-chain residual is checked afterwards anyway.
    x0 = start[act] / start[act].sum() if start is not None and start[act].sum() > 0.0 else v.copy()
    x, info = spla.gmres(A, v, x0=x0, rtol=GMRES_RTOL, atol=0.0, restart=min(na, 100),
                         maxiter=10, callback=watch if relax else None, callback_type="pr_norm")
    x = np.clip(x, 0.0, None)
    if last[0] is not None and np.array_equal(x, last[0]):
        pi = last[1]       # GMRES's true residual was this product (item 13): the same numbers, one product fewer
    else:
        _, pi = left_K(x)  # exact
    bar.close()
    return pi, calls[0]


def _sparse_blocks(s: _Structure, t_args: tuple, pick: np.ndarray) -> tuple:
    """:func:`.blocks.sparse_blocks` for the SCCs ``pick`` with this module's options."""
    return sparse_blocks(s, t_args, pick, SPARSE_LU_OPTIONS, SPARSE_LU_OPTIONS_LARGE, SPARSE_MMD_FROM)


def _iterative_blocks(s: _Structure, t_args: tuple, pick: np.ndarray) -> tuple:
    """:func:`.blocks.iterative_blocks` with this module's GMRES settings."""
    return iterative_blocks(s, t_args, pick, BLOCK_GMRES_RESTART, BLOCK_GMRES_RTOL, BLOCK_GMRES_MAX_RESTARTS)


def _structured_direct(sk: Skeleton, Q: np.ndarray):
    s = _structure(sk)
    n = sk.n_states
    t_args = (sk.states, sk.nl_ptr, sk.nl_prob, sk.nl_t, Q)
    n_events = s.n_events
    h, ok = backward_h(n, s.order, s.ptr, *t_args, s.e_ptr, s.e_idx, s.e_val, n_events, s.comp, s.pos)
    if not ok:
        return None  # a loss-free closed class: the regenerative reduction does not apply
    act = s.active
    if len(act) == 0:
        return None
    K = event_kernel(h, sk.reg, s.mmax, sk.constant_s, Q, s.n_codes, regeneration_law(sk.outage_wait))
    Ka = K[np.ix_(act, act)]
    # reference event: largest mass after a few power steps on the small event chain
    lam = np.full(len(act), 1.0 / len(act))
    for _ in range(100):
        lam = lam @ Ka
        lam /= lam.sum()
    ref = int(np.argmax(lam))
    lam_a = _reduced_solve_dense(np.eye(len(act)) - Ka, ref)
    lam_full = np.zeros(n_events)
    lam_full[act] = np.clip(lam_a, 0.0, None)
    nu = entry_vector(lam_full, sk.reg, s.mmax, n, sk.constant_s, Q, s.n_codes, regeneration_law(sk.outage_wait))
    return forward_pi(nu, s.order, s.ptr, *t_args, s.comp, s.pos)


def _describe(Q: np.ndarray) -> str:
    if Q.shape == (2, 2):
        return f"p01={Q[0, 1]:g}, p10={Q[1, 0]:g}"
    return f"{Q.shape[0]}-level rate chain"


def stationary_distribution(sk: Skeleton, rates, p10: float | None = None, method: str = "structured",
                            tol: float = DEFAULT_TOL, P: sp.csr_matrix | None = None,
                            max_iter: int = 2_000_000, progress: bool = False) -> StationarySolution:
    """Stationary law pi of the embedded chain for the rate chain ``rates``.

    ``rates``: the K x K transition matrix of the rate chain per round trip
    (:attr:`Scenario.rate_matrix`), or the two-state switch probability ``p01`` with
    ``p10``.  ``progress=True`` shows a tqdm bar once the structured solve has lasted 2 s.
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r} is invalid: must be one of {', '.join(METHODS)}")
    Q = sk.chain(rates, p10)
    if P is None:
        P = sk.transition_matrix(Q)
    n = P.shape[0]
    k = closed_classes(P)
    if k != 1:
        raise ErgodicityError(
            f"the embedded chain has {k} closed classes: no unique stationary law "
            f"({_describe(Q)}); with psi = 1 the rate chain alternates deterministically "
            "and can lock the chain into phase-dependent classes: use psi slightly above 1 (a periodic "
            "K-level chain can do the same)"
        )
    t0 = time.perf_counter()
    iters = 0
    used = method
    pi = None
    if method == "structured":
        pi, iters = _structured_krylov(sk, Q, progress)
        if pi is None:
            used = "sparse-direct (structured fallback: loss-free closed class)"
            method = "sparse-direct"
    elif method == "structured-direct":
        pi = _structured_direct(sk, Q)
        if pi is None:
            used = "sparse-direct (structured fallback: loss-free closed class)"
            method = "sparse-direct"
    if method == "sparse-direct":
        ref = _reference_index(P)
        A = (sp.identity(n, format="csr") - P).T.tocsc()
        keep = np.r_[0:ref, ref + 1:n]
        A11 = A[keep][:, keep].tocsc()
        b = -A[keep][:, [ref]].toarray().ravel()
        pi = np.empty(n)
        pi[ref] = 1.0
        pi[keep] = spla.spsolve(A11, b)
    elif method == "dense":
        if n > DENSE_LIMIT:
            raise SolveError(f"dense: {n} states exceed the dense limit of {DENSE_LIMIT}")
        ref = _reference_index(P)
        pi = _reduced_solve_dense(np.eye(n) - P.toarray(), ref)
    elif method == "power":
        PT = P.T.tocsr()
        pi = np.full(n, 1.0 / n)
        for iters in range(1, max_iter + 1):
            nxt = PT @ pi
            if np.abs(nxt - pi).sum() < 1e-12:
                pi = nxt
                break
            pi = nxt
        else:
            raise SolveError(f"power: no convergence to 1e-12 in {max_iter} iterations")
    elif method == "quantecon":
        if n > DENSE_LIMIT:
            raise SolveError(f"quantecon: {n} states exceed the dense limit of {DENSE_LIMIT}")
        import quantecon as qe

        dists = qe.MarkovChain(P.toarray()).stationary_distributions
        if dists.shape[0] != 1:
            raise SolveError(f"quantecon: {dists.shape[0]} recurrent classes; the chain is not ergodic")
        pi = dists[0]
    seconds = time.perf_counter() - t0
    pi, res = _check(np.asarray(pi, dtype=float), P, tol, used)
    return StationarySolution(pi, res, used, seconds, iters)


# ---- matrix-free structured solve (K > 2 levels; docs/model.md, "K capacity states") ----------
def _event_targets(sk: Skeleton, Q: np.ndarray):
    """COO (event, state, G) of the event -> regeneration-state law G of eq. 13, in
    increasing event order (every loss-event code at once, in the order of codes)."""
    nlev = sk.n_levels
    mmax = sk.reg.shape[0] - 1
    Pk = from_first_serving(rate_law_powers(Q, mmax), regeneration_law(sk.outage_wait))
    c = np.arange(1, sk.n_codes + 1)   # loss-event codes (docs/model.md sec. 12)
    m = np.array([code_m(x, mmax) for x in c], dtype=np.int64)
    u = np.array([code_u(x, mmax) for x in c], dtype=np.int64)
    if sk.constant_s:
        G = Pk[u]                                                   # (c, i1, i2)
        tgt = np.broadcast_to(sk.reg[m, :, 0][:, None, :], G.shape)
    else:
        G = Pk[u - 1][:, :, :, None] * Q[None, None, :, :]          # (c, i1, j2, i2)
        tgt = np.broadcast_to(sk.reg[m].transpose(0, 2, 1)[:, None, :, :], G.shape)  # reg[m, i2, j2]
    ev = np.broadcast_to((nlev * (c[:, None] - 1) + np.arange(nlev)).reshape(G.shape[:2] + (1,) * (G.ndim - 2)),
                         G.shape)
    keep = (G > 0) & (tgt >= 0)
    return ev[keep], tgt[keep], G[keep]


def _closed_count(sk: Skeleton, s: _Structure, Q: np.ndarray, g_ev: np.ndarray, g_st: np.ndarray) -> int:
    """Closed classes of P that hold states, on the factored graph (states, then events as
    pass-through nodes; T's, L_E's and G's edges read from the skeleton), counted once per
    pattern of Q and G: a psi sweep keeps it (``s.closed``)."""
    hit, qpat = s.closed, (Q > 0).tobytes()
    if hit is not None and hit[0] == qpat and np.array_equal(hit[1], g_ev) and np.array_equal(hit[2], g_st):
        return hit[3]
    n, g_ptr = sk.n_states, np.zeros(s.n_events + 1, dtype=np.int64)
    np.cumsum(np.bincount(g_ev, minlength=s.n_events), out=g_ptr[1:])
    f_args = (sk.states, sk.nl_ptr, sk.nl_t, Q, sk.ls_ptr, s.e_idx, g_ptr, g_st)
    order, ptr = factored_scc(*f_args)
    lab = np.empty(n + s.n_events, dtype=np.int64)
    lab[order] = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
    left = factored_leaving(*f_args, lab, ptr.size - 1)
    # closed classes that hold states (an event no loss reaches and no state follows is alone)
    s.closed = (qpat, g_ev, g_st, int(np.unique(lab[:n][~left[lab[:n]]]).size))   # fresh arrays, never changed
    return s.closed[3]


def structured_matrix_free(sk: Skeleton, rates, p10: float | None = None, method: str = "structured",
                           tol: float = DEFAULT_TOL, progress: bool = False, start: np.ndarray | None = None):
    """The structured solve without assembling P (for K-level chains, whose loss part has
    K^2 regeneration targets per loss entry).

    P = T + L_E G (docs/model.md sec. 8) is used in factored form: the closed classes are
    counted on the graph of T, L_E and G (events as pass-through nodes, which have the
    same closed classes over the states as P; ``kernels.classes.factored_scc``), and the residual is
    ``||pi T + (pi L_E) G - pi||_1``.  Returns ``(solution, nnz)`` with ``nnz`` the
    stored entries of T plus those of L (duplicates between the two not merged: an upper
    bound on the nonzeros of P), or ``(None, 0)`` where the structured reduction does not
    apply (a loss-free closed class; use :func:`stationary_distribution`).  Nothing of the
    size of P is stored: T is read from the skeleton, L_E is the skeleton's loss entries,
    and the closed classes are found on the factored graph read from the same arrays (not
    built: docs/model.md sec. 5a item 9).  ``start``: the loss-event law the GMRES starts from
    (:func:`event_start`; default uniform).
    """
    if method not in ("structured", "structured-direct"):
        raise ValueError(f"method={method!r} is invalid: the matrix-free solve is 'structured' or "
                         "'structured-direct'")
    Q = sk.chain(rates, p10)
    s = _structure(sk)
    n = sk.n_states
    n_events = s.n_events
    t_args = (sk.states, sk.nl_ptr, sk.nl_prob, sk.nl_t, Q)
    g_ev, g_st, g_val = _event_targets(sk, Q)
    k = _closed_count(sk, s, Q, g_ev, g_st)
    if k != 1:
        raise ErgodicityError(
            f"the embedded chain has {k} closed classes: no unique stationary law ({_describe(Q)}); a "
            "periodic rate chain can lock the chain into phase-dependent classes")
    t0 = time.perf_counter()
    iters = 0
    info: dict = {}
    with blas_threads(SOLVE_BLAS_THREADS):   # the same numbers on every machine, no spinning threads
        if method == "structured":
            # K > 2: SCC blocks inverted once per solve; K = 2 keeps an LU solve per block and
            # product, so its pi is the assembled path's bit for bit
            pi, iters = _structured_krylov(sk, Q, progress, prepared=sk.n_levels > 2, info=info, start=start)
        else:
            pi = _structured_direct(sk, Q)
    if pi is None:
        return None, 0
    seconds = time.perf_counter() - t0
    pi = _normalised(np.asarray(pi, dtype=float), method)
    G = sp.csr_matrix((g_val, (g_ev, g_st)), shape=(n_events, n))
    res = float(np.abs(left_lossfree(pi, *t_args) + G.T @ s.event_mass(pi) - pi).sum())
    if not res <= tol:
        raise SolveError(f"{method}: residual ||pi P - pi||_1 = {res:.3g} exceeds tol={tol:.1g}")
    # stored entries of T (one per (x, N) entry and next level with Q > 0) and of L
    n_t = int(np.diff(sk.nl_ptr) @ (Q > 0).sum(axis=1)[sk.states[:, 3]])
    nnz = n_t + int(np.bincount(s.e_idx, minlength=n_events) @ np.bincount(g_ev, minlength=n_events))
    lu = info.get("superlu_blocks", 0)
    note = f" [{lu} SCC block{'s' * (lu != 1)} by SuperLU]" if lu else ""
    return StationarySolution(pi, res, method + note + " (matrix-free)", seconds, iters), nnz


def loss_event_law(sk: Skeleton, pi: np.ndarray) -> np.ndarray:
    """lambda = pi L_E over every loss event of ``sk`` (what :func:`event_start` maps)."""
    return _structure(sk).event_mass(pi)


def event_start(events: np.ndarray, mmax_from: int, sk: Skeleton) -> np.ndarray:
    """A loss-event law of a chain with ``mmax_from`` windows (:func:`loss_event_law`)
    on the events of ``sk`` (docs/model.md sec. 19): event ``K (c - 1) + R`` with code ``c =
    kind mmax + m`` keeps its level, kind and window ``m``; windows that ``sk`` lacks are
    dropped and the ones it adds start at 0.  The start of the GMRES only: the solve's
    answer does not depend on it beyond its tolerance."""
    s, nlev = _structure(sk), sk.n_levels
    out = np.zeros(s.n_events)
    e = np.arange(events.size)
    c = e // nlev + 1
    m = (c - 1) % mmax_from + 1                    # kernels.recovery.code_m(c, mmax_from)
    c2 = (c - 1) // mmax_from * s.mmax + m         # the same kind and window on this chain's codes
    ok = (m <= s.mmax) & (c2 <= s.n_codes)
    np.add.at(out, (nlev * (c2[ok] - 1) + e[ok] % nlev), events[ok])
    return out
