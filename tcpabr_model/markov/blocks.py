"""The SCC blocks of the loss-free part that the matrix-free structured solve does not invert
dense (docs/model.md sec. 5a items 8 and 11): the data of an iterative solve (ILU(0)-
preconditioned GMRES, :mod:`.kernels.iterative`), whose memory is that of the blocks' own
entries, for the blocks of ``solvers.ITERATIVE_FROM`` states or more, and sparse LU factors
(SuperLU), whose fill grows with the block, for those between ``solvers.SPARSE_BLOCK_FROM``
and it (none by default) or for all of them where a block's GMRES fails.  Both packed as
plain arrays for :func:`.kernels.structured.forward_pi_prepared`."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import ChainTooLargeError, SolveError
from . import estimate
from .kernels.classes import renumbered_rows
from .kernels.iterative import block_rows, failing_blocks, gmres_workspace, ilu0_blocks
from .kernels.structured import large_block_entries

__all__ = ["sparse_blocks", "iterative_blocks", "renumbered"]


def sparse_blocks(s, t_args: tuple, pick: np.ndarray, lu_options: dict, lu_options_large: dict,
                  mmd_from: int) -> tuple:
    """Sparse LU factors of ``A = (I - T_CC)^T`` for every SCC C with ``pick[C]`` (``splu``
    options ``lu_options``, from ``mmd_from`` states ``lu_options_large``), packed for :func:`~.kernels.structured.forward_pi_prepared`: ``(lu_of, lu_vo,
    perm_r, perm_c, udiag, l_ptr, l_idx, l_val, u_ptr, u_idx, u_val)`` with ``lu_of[c]`` the
    block index of SCC ``c`` (-1: dense), block ``b``'s k-vectors at ``lu_vo[b]``, its k + 1
    column pointers (absolute) at ``lu_vo[b] + b``, and L's strictly lower, U's strictly upper
    parts in CSC (SuperLU's ``Pr A Pc = L U``, L with unit diagonal).  A block that SuperLU
    finds singular raises :class:`SolveError`."""
    blocks, e_ptr, rows, cols, vals = large_block_entries(s.order, s.ptr, *t_args, s.comp, s.pos, pick)
    lu_of = np.full(s.ptr.size - 1, -1, dtype=np.int64)
    lu_of[blocks] = np.arange(blocks.size)
    sizes = np.diff(s.ptr)[blocks]
    lu_vo = np.zeros(blocks.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=lu_vo[1:])
    tot = int(lu_vo[-1])
    perm_r = np.empty(tot, dtype=np.int64)
    perm_c = np.empty(tot, dtype=np.int64)
    udiag = np.empty(tot)
    l_ptr = np.zeros(tot + blocks.size, dtype=np.int64)
    u_ptr = np.zeros(tot + blocks.size, dtype=np.int64)
    l_parts: list = []
    u_parts: list = []
    l_n = u_n = 0
    # the factors' fill is known only once factored: stop with the reason, not an
    # out-of-memory kill, when they (twice: the parts and their concatenation) outgrow the
    # memory that was available when they started
    budget = estimate.available_memory()
    for b in range(blocks.size):
        k = int(sizes[b])
        sl = slice(e_ptr[b], e_ptr[b + 1])
        A = sp.csc_matrix((vals[sl], (rows[sl], cols[sl])), shape=(k, k))
        try:
            # the block's own order, no pivoting: A is a nonsingular M-matrix (column diagonally
            # dominant), so its LU exists without pivots and is stable, and the SCC's order
            # (Tarjan's) fills less than COLAMD's at a third less time (solvers.SPARSE_LU_OPTIONS)
            lu = spla.splu(A, **(lu_options if k < mmd_from else lu_options_large))
        except RuntimeError as err:   # SuperLU: "Factor is exactly singular"
            raise SolveError(f"structured: an SCC block of {k} states could not be factored ({err})") from err
        v = int(lu_vo[b])
        perm_r[v:v + k] = lu.perm_r
        perm_c[v:v + k] = lu.perm_c
        U = lu.U
        udiag[v:v + k] = U.diagonal()
        for M, ptr_out, parts, base in ((lu.L, l_ptr, l_parts, l_n), (U, u_ptr, u_parts, u_n)):
            col = np.repeat(np.arange(k), np.diff(M.indptr))
            keep = M.indices != col            # the off-diagonal entries (L's diagonal is 1)
            counts = np.bincount(col[keep], minlength=k)
            ptr_out[v + b] = base
            np.cumsum(counts, out=ptr_out[v + b + 1:v + b + k + 1])
            ptr_out[v + b + 1:v + b + k + 1] += base
            parts.append((M.indices[keep].astype(np.int32), M.data[keep]))
        l_n = int(l_ptr[v + b + k])
        u_n = int(u_ptr[v + b + k])
        del lu, A, U
        if 2 * 12 * (l_n + u_n) > budget:
            raise ChainTooLargeError(
                f"the sparse LU factors of the chain's strongly connected blocks need more than "
                f"{2 * 12 * (l_n + u_n) / 1e9:.1f} GB after {b + 1} of {blocks.size} blocks (the largest "
                f"{int(sizes.max())} states), above the {budget / 1e9:.1f} GB of memory available; reduce "
                "wmax, bmax or the patterns per level")

    def cat(parts, i, dtype):
        return np.concatenate([p[i] for p in parts]) if parts else np.empty(0, dtype=dtype)

    return (lu_of, lu_vo, perm_r, perm_c, udiag, l_ptr, cat(l_parts, 0, np.int32), cat(l_parts, 1, float), u_ptr,
            cat(u_parts, 0, np.int32), cat(u_parts, 1, float))


def iterative_blocks(s, t_args: tuple, pick: np.ndarray, restart: int, rtol: float, max_restarts: int) -> tuple:
    """The data of :func:`.kernels.iterative.block_gmres` for the SCCs ``blocks`` =
    ``flatnonzero(pick)`` (block ``b`` is SCC ``blocks[b]``): ``M = I - T_CC`` in CSR, its
    ILU(0), a workspace for the largest, ``rtol`` and ``max_restarts`` (the last argument of
    :func:`.kernels.structured.forward_pi_prepared`).  Returns ``(data,
    blocks, failed)`` with ``failed[b]`` true where the ILU(0) has a pivot that is not positive
    (M is a nonsingular M-matrix, so it should not happen) or GMRES does not converge on a
    right-hand side of ones: those blocks are for SuperLU."""
    blocks = np.flatnonzero(pick).astype(np.int64)
    ro, rp, idx, val, dg = block_rows(s.order, s.ptr, *t_args, s.comp, s.pos, blocks)
    lu, bad = ilu0_blocks(ro, rp, idx, val, dg)
    sizes = np.diff(s.ptr)
    kmax = int(sizes[blocks].max()) if blocks.size else 1
    data = (ro, rp, idx, val, lu, dg) + gmres_workspace(kmax, restart) + (float(rtol), int(max_restarts))
    return data, blocks, failing_blocks(*data[:6], bad, *data[6:])


def renumbered(s, sk) -> tuple:
    """The solver's structure ``s`` (``solvers._Structure``) and the skeleton ``sk``'s T arrays
    with the states numbered in the SCC order (``s.order[i]`` becomes ``i``; kept on ``s``): the
    substitution then walks T's rows in memory order, about twice as fast (docs/model.md sec. 17,
    "Cost"), with the same operations in the same order, so the same bits.  Returns ``(structure,
    (st, nl_ptr, nl_prob, nl_t))``, the structure with ``order``, ``ptr``, ``comp``, ``pos`` and
    ``looped`` of the renumbered states."""
    if s._renumbered is None:
        n, order = len(s.order), s.order
        new = np.empty(n, dtype=np.int64)
        new[order] = np.arange(n)
        tail, tab = sk.nl_t
        ptr2, prob2, tail2 = renumbered_rows(order, sk.nl_ptr, sk.nl_prob, tail)
        r = SimpleNamespace(order=np.arange(n), ptr=s.ptr, comp=s.comp[order], pos=s.pos[order],
                            looped=s.looped[order])
        s._renumbered = (r, (sk.states[order], ptr2, prob2, (tail2, new[tab].astype(tab.dtype))))
    return s._renumbered
