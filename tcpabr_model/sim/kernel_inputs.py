"""The plain arrays both numba kernels run on, built from a :class:`Network` description.

:func:`kernel_inputs` turns a network into the general kernel's parameter arrays;
:func:`draw_replication` fills in one replication's random inputs (every port's capacity
path, the GFR lottery key, start offsets); :func:`fast_path_inputs` gives the same
replication as the single-bottleneck fast path's arguments when the network is one it
models exactly (a :class:`Scenario`'s network always is), and :func:`as_network_outputs`
maps the fast path's outputs back to the general kernel's layout.  Array columns are those
of :mod:`.arrays.layout`.
"""

from __future__ import annotations

import math

import numpy as np

from .abr.kernel_arrays import abr_inputs
from .arrays import layout as L
from .kernels.delay_record import delay_arrays
from .capacity import CapacityPath, build_path, two_state_path
from .network import CELL_BYTES, CapacityProcess, Network
from .tcp.variants import VARIANT_IDS as _VAR

__all__ = ["kernel_inputs", "fast_path_inputs", "draw_replication", "port_path", "as_network_outputs", "ARG_ORDER"]

_POL = {"tail": L.POL_TAIL, "ppd": L.POL_PPD, "epd": L.POL_EPD, "sd": L.POL_SD, "fba": L.POL_FBA,
        "gfr": L.POL_GFR, "threshold": L.POL_THRESH}
_SRC = {"none": L.SRC_FIXED, "instcap": L.SRC_FEEDBACK, "effcap": L.SRC_FEEDBACK, "constant": L.SRC_CONSTANT,
        "rm": L.SRC_ABR}


def kernel_inputs(net: Network, force=()):
    """Plain arrays for :func:`~tcpabr_model.sim.kernels.general.simulate_network_kernel`.

    Returns a dict; ``ptimes``, ``pseq``, ``plev``, ``G_SEED`` and ``PP_INITSTATE`` are filled per replication
    by :func:`draw_replication`.
    """
    ts = net.to_slots
    upf = net.units_per_frame
    nport = len(net.ports)
    nvc_d = len(net.vcs)
    nvc = nvc_d + len(net.vbr)
    ncon = net.n_connections
    tcp = net.tcp
    g = np.zeros(L.G_NPAR, dtype=np.int64)
    g[L.G_NSLOTS] = net.total_slots
    g[L.G_WARMUP] = int(round(net.warmup / net.slot_seconds))
    g[L.G_MEAS] = ts(net.interval)
    g[L.G_RTOMODE] = 0 if tcp.rto == "fixed" else 1
    g[L.G_GRAN] = ts(tcp.granularity)
    g[L.G_RTOMIN] = ts(tcp.rto_min)
    g[L.G_RTOMAX] = ts(tcp.rto_max)
    g[L.G_DELACK] = 1 if tcp.delayed_ack else 0
    g[L.G_DELACKTO] = ts(tcp.delack_timeout)
    g[L.G_DUPTHRESH] = tcp.dupthresh
    g[L.G_RTOINIT] = ts(tcp.rto_initial)
    gf = np.zeros(L.GF_NPAR)
    gf[L.GF_SLOTB] = float(CELL_BYTES)
    gf[L.GF_UNITB] = float(net.unit_bytes)

    pp = np.zeros((nport, L.PP_NPAR), dtype=np.int64)
    pf = np.zeros((nport, L.PF_NPAR))
    qcap = np.zeros((nport, L.NCLASS), dtype=np.int64)
    qpol = np.zeros((nport, L.NCLASS), dtype=np.int64)
    qf = np.zeros((nport, L.NCLASS, L.QP_NPAR))
    dl_cap = np.zeros(nport, dtype=np.int64)
    for p, port in enumerate(net.ports):
        pp[p, L.PP_LINKDELAY] = ts(port.link_delay)
        pf[p, L.PF_RATE] = port.rate
        # PF_LOW is informative only: the kernel reads the levels from plev (issue 15)
        pf[p, L.PF_LOW] = port.capacity.rate_ratio if isinstance(port.capacity, CapacityProcess) else 1.0
        pf[p, L.PF_GR] = port.gr
        pf[p, L.PF_NETVBR] = 1.0 if port.feedback_net_of_vbr else 0.0
        qcap[p] = (port.vbr_buffer, port.abr_buffer, port.ubr_buffer)
        qpol[p] = (L.POL_TAIL, _POL[port.abr_policy.kind], _POL[port.ubr_policy.kind])
        qf[p, L.CL_ABR] = port.abr_policy.resolved(port.abr_buffer, upf)
        qf[p, L.CL_UBR] = port.ubr_policy.resolved(port.ubr_buffer, upf)
        per_slot = math.ceil(port.rate * CELL_BYTES / net.unit_bytes) + 1
        dl_cap[p] = (pp[p, L.PP_LINKDELAY] + 2) * per_slot + 16

    vp = np.zeros((nvc, L.VP_NPAR), dtype=np.int64)
    vf = np.zeros((nvc, L.VF_NPAR))
    maxh = max(len(v.route) for v in list(net.vcs) + list(net.vbr))
    vroute = np.zeros((nvc, maxh), dtype=np.int64)
    vthr = np.zeros((nvc, nport, 2))
    cp = np.zeros((ncon, L.CP_NPAR), dtype=np.int64)
    cf = np.zeros((ncon, L.CF_NPAR))
    c = 0
    for i, vc in enumerate(net.vcs):
        vroute[i, :len(vc.route)] = vc.route
        vp[i, L.VP_CLASS] = L.CL_ABR if vc.category == "abr" else L.CL_UBR
        vp[i, L.VP_NHOPS] = len(vc.route)
        vp[i, L.VP_UPF] = upf
        vp[i, L.VP_SRCMODE] = _SRC[vc.feedback]
        vp[i, L.VP_FBPORT] = vc.feedback_port if vc.feedback_port is not None else vc.route[0]
        rtt = net.round_trip(i)
        vp[i, L.VP_FBDELAY] = ts(vc.feedback_delay if vc.feedback_delay is not None else rtt)
        vp[i, L.VP_M] = vc.m
        vp[i, L.VP_N] = vc.n
        vp[i, L.VP_CONN0] = c
        vp[i, L.VP_NCONN] = vc.connections
        vp[i, L.VP_TAG] = 1 if vc.tagged else 0
        vf[i, L.VF_RATE] = vc.pcr * CELL_BYTES
        vf[i, L.VF_SHARE] = vc.share
        vf[i, L.VF_INITRATE] = vc.initial_rate
        vf[i, L.VF_MCR] = vc.mcr
        for p in vc.route:
            kind = net.ports[p].ubr_policy.kind if vp[i, L.VP_CLASS] == L.CL_UBR else net.ports[p].abr_policy.kind
            if kind in ("gfr", "threshold") and vc.threshold is None:
                raise ValueError(f"threshold=None is invalid for VC {i}: port {p} uses the {kind!r} policy, "
                                 "which needs the VC's R_i")
            vthr[i, p, 0] = vc.threshold if vc.threshold is not None else 0.0
            vthr[i, p, 1] = vc.weight if vc.weight is not None else 1.0
        back = vc.ack_delay if vc.ack_delay is not None else net.forward_delay(i)
        ackd = ts(back + vc.access_delay + vc.egress_delay)
        for _ in range(vc.connections):
            cp[c, L.CP_VC] = i
            cp[c, L.CP_ACKDELAY] = ackd
            cp[c, L.CP_WMAX] = tcp.wmax
            cp[c, L.CP_RTOFIX] = max(1, int(round(tcp.rto_rtt_factor * rtt / net.slot_seconds)))
            cp[c, L.CP_VARIANT] = _VAR[tcp.variant]
            cp[c, L.CP_UPF] = upf
            cf[c, L.CF_SSTHRESH0] = float(tcp.initial_ssthresh or tcp.wmax)
            cf[c, L.CF_IW] = float(tcp.initial_window)
            c += 1
    for j, vb in enumerate(net.vbr):
        i = nvc_d + j
        vroute[i, :len(vb.route)] = vb.route
        vp[i, L.VP_CLASS] = L.CL_VBR
        vp[i, L.VP_NHOPS] = len(vb.route)
        vp[i, L.VP_UPF] = 1
        vp[i, L.VP_SRCMODE] = L.SRC_VBR
        vp[i, L.VP_FBPORT] = vb.route[0]
        vp[i, L.VP_M] = 1
        vp[i, L.VP_N] = 1
        vp[i, L.VP_ON] = ts(vb.on)
        vp[i, L.VP_OFF] = ts(vb.off)
        vp[i, L.VP_PHASE] = ts(vb.phase)
        vp[i, L.VP_CONN0] = ncon
        vf[i, L.VF_RATE] = vb.rate * CELL_BYTES
        vf[i, L.VF_SHARE] = 1.0
        vf[i, L.VF_INITRATE] = 1.0
    fc = np.array([x for x, _ in force], dtype=np.int64)
    fq = np.array([q for _, q in force], dtype=np.int64)
    for x, q in force:
        if not 0 <= x < ncon or q < 0:
            raise ValueError(f"force_drops entry {(x, q)!r} is invalid: needs 0 <= connection < {ncon}, seq >= 0")
    wmax = tcp.wmax
    sq_cap = max(1 << 16, 64 * wmax)
    maxack = int(cp[:, L.CP_ACKDELAY].max())
    ak_cap = (maxack // max(1, upf) + 1) * 2 + 4 * wmax + 64 if net.atm else maxack + 4 * wmax + 64
    fb_cap = int(vp[:, L.VP_FBDELAY].max() // g[L.G_MEAS]) + 4
    rb_cap = 2 * wmax + 8
    kin = {"gpar": g, "gfpar": gf, "ppar": pp, "pfpar": pf, "qcap": qcap, "qpol": qpol, "qfpar": qf,
           "vpar": vp, "vfpar": vf, "vroute": vroute, "vthr": vthr, "cpar": cp, "cfpar": cf,
           "force_conn": fc, "force_seq": fq, "sq_cap": sq_cap, "ak_cap": ak_cap, "fb_cap": fb_cap,
           "rb_cap": rb_cap, "dl_cap": dl_cap}
    kin["abr"] = abr_inputs(net, kin)   # ABR RM-cell state (docs/abr_erica.md)
    kin["delay"] = delay_arrays(len(net.ports))     # delay histograms, filled by the kernel (issue 26)
    return kin


ARG_ORDER = ("gpar", "gfpar", "ppar", "pfpar", "ptimes", "pseq", "plev", "qcap", "qpol", "qfpar", "vpar",
              "vfpar", "vroute", "vthr", "cpar", "cfpar", "force_conn", "force_seq", "sq_cap", "ak_cap", "fb_cap",
              "rb_cap", "dl_cap", "abr", "delay")


def fast_path_inputs(net: Network, kin: dict, sample: int | None = None):
    """Arguments of the single-bottleneck fast path (:mod:`tcpabr_model.sim.kernels.fast_path`) that simulate ``net``
    exactly, or None when the fast path cannot (then the general kernel must).

    ``kin`` are the network's kernel inputs of one replication (:func:`kernel_inputs` with
    the random inputs drawn by :func:`draw_replication`; any capacity the port has: the
    two-state process, a K-state chain or a trace).  ``sample``: the fast path's series
    (traces, batch means) every ``sample`` slots, a multiple of the measurement interval;
    None for none.  The network qualifies when it is what the
    fast path models: one port, no VBR source, no ERICA, no guaranteed rate, PPD or EPD at
    the one class queue used, every VC one connection on route ``(0,)``, all ABR with
    INSTCAP / EFFCAP / constant rate over ATM (port rate 1) or all UBR with ``feedback='none'``
    without ATM, untagged, and no start jitter.  ``Scenario.to_network()`` always qualifies.
    """
    if len(net.ports) != 1 or net.vbr or net.start_jitter > 0:
        return None
    port = net.ports[0]
    atm = net.atm
    pol = port.abr_policy if atm else port.ubr_policy
    if port.gr != 0.0 or port.erica is not None or pol.kind not in ("ppd", "epd"):
        return None
    for vc in net.vcs:
        if (vc.route != (0,) or vc.connections != 1 or vc.tagged or vc.feedback_port not in (None, 0)
                or vc.category != ("abr" if atm else "ubr")
                or vc.feedback not in (("instcap", "effcap", "constant") if atm else ("none",))):
            return None
    vp, vf, pf = kin["vpar"], kin["vfpar"], kin["pfpar"]
    if atm and pf[0, L.PF_RATE] != 1.0:     # the fast path's feedback rates omit the port rate
        return None
    k = L.CL_ABR if atm else L.CL_UBR
    g = kin["gpar"].copy()      # the shared G_* columns (slots, warm-up, interval, TCP)
    g[L.G_UPF] = net.units_per_frame
    g[L.G_BUF] = kin["qcap"][0, k]
    # EPD admits a frame iff X < R (X integer): the fast path's X < ceil(R)
    g[L.G_EPD] = int(math.ceil(kin["qfpar"][0, k, L.QP_R])) if pol.kind == "epd" else -1
    if sample is None:
        g[L.G_SAMPLE] = g[L.G_MEAS] * (g[L.G_NSLOTS] // g[L.G_MEAS] + 1)   # no samples needed
    elif sample < 1 or sample % g[L.G_MEAS] != 0:
        raise ValueError(f"sample={sample!r} is invalid: must be a positive multiple of the measurement "
                         f"interval ({int(g[L.G_MEAS])} slots)")
    else:
        g[L.G_SAMPLE] = sample
    g[L.G_INITSTATE] = kin["ppar"][0, L.PP_INITSTATE]
    gf = np.zeros(L.GF_NPAR)
    gf[L.GF_SLOTB] = kin["gfpar"][L.GF_SLOTB]
    gf[L.GF_UNITB] = kin["gfpar"][L.GF_UNITB]
    gf[L.GF_RATE] = pf[0, L.PF_RATE]
    gf[L.GF_LOW] = pf[0, L.PF_LOW]
    cp = kin["cpar"].copy()
    cf = kin["cfpar"].copy()
    nc = cp.shape[0]
    cp[:, L.CP_FBDELAY] = vp[:nc, L.VP_FBDELAY]
    cp[:, L.CP_M] = vp[:nc, L.VP_M]
    cp[:, L.CP_N] = vp[:nc, L.VP_N]
    cp[:, L.CP_ABR] = np.where(vp[:nc, L.VP_SRCMODE] == L.SRC_CONSTANT, 2,
                               np.where(vp[:nc, L.VP_SRCMODE] == L.SRC_FEEDBACK, 1, 0))
    cf[:, L.CF_SHARE] = vf[:nc, L.VF_SHARE]
    cf[:, L.CF_HOSTRATE] = vf[:nc, L.VF_RATE]
    cf[:, L.CF_INITRATE] = vf[:nc, L.VF_INITRATE]
    cf[:, L.CF_MCR] = vf[:nc, L.VF_MCR]
    return (g, gf, cp, cf, np.ascontiguousarray(kin["ptimes"][0]), np.ascontiguousarray(kin["pseq"][0]),
            np.ascontiguousarray(kin["plev"][0]), kin["force_conn"], kin["force_seq"],
            kin["sq_cap"], kin["ak_cap"], kin["fb_cap"], kin["rb_cap"], *kin["delay"])


def as_network_outputs(net: Network, fout):
    """The fast path's outputs in the general kernel's layout (st, fs, vst, vfs, pst, pfs,
    gout, inflight), for the counters :func:`simulate_network` reads."""
    st, fs, fg = fout[0].copy(), fout[1], fout[2]
    k = L.CL_ABR if net.atm else L.CL_UBR
    nc = st.shape[0]
    served = st[:, L.S_CSERVED].copy()
    vst = np.zeros((nc, L.V_NSTATE), dtype=np.int64)
    vst[:, L.V_CURC] = -1
    vst[:, L.V_NEXTTOG] = L.BIG
    vst[:, L.V_CSENT] = st[:, L.S_CSENT]
    vst[:, L.V_CDROP] = st[:, L.S_CDROP]
    vst[:, L.V_CDELIV] = served
    vfs = np.zeros((nc, L.VS_NSTATE))
    vfs[:, L.VS_ACR] = fs[:, L.F_ACR]
    pst = np.zeros((1, L.PS_NSTATE), dtype=np.int64)
    pst[0, L.PS_DROP0 + k] = st[:, L.S_CDROP].sum()
    pst[0, L.PS_SERVED0 + k] = served.sum()
    pst[0, L.PS_SERVEDW0 + k] = int(fg[L.O_SERVEDW])
    pst[0, L.PS_QMAX] = pst[0, L.PS_QMAX0 + k] = int(fg[L.O_QMAX])
    pst[0, L.PS_FDROP] = st[:, L.S_FDROP].sum()
    pfs = np.zeros((1, L.PFS_NSTATE))
    pfs[0, L.PFS_CAPTOT] = fg[L.O_CAPTOT]
    pfs[0, L.PFS_CAPWIN] = fg[L.O_CAPWIN]
    pfs[0, L.PFS_QINT] = fg[L.O_QINT]
    gout = np.zeros(L.O_NOUT)
    gout[L.O_ERR] = fg[L.O_ERR]
    gout[L.O_NMEAS] = fg[L.O_NMEAS]
    inflight = st[:, L.S_CSENT] - st[:, L.S_CDROP] - served
    for col in (L.S_FBHEAD, L.S_FBCNT, L.S_PPDTX, L.S_CSERVED):     # fast-path-only state
        st[:, col] = 0
    st[:, L.S_STARTED] = 1
    return st, fs, vst, vfs, pst, pfs, gout, inflight


def port_path(net: Network, port, rng: np.random.Generator, horizon: float) -> CapacityPath:
    """The capacity path of ``port`` on ``[0, horizon)`` slots for one replication: constant
    (no capacity process), the two-state process, or a K-state model or a trace
    (:func:`.capacity.build_path`)."""
    cp = port.capacity
    if cp is None:
        return CapacityPath(np.array([np.inf]), np.zeros(1, np.int64), np.ones(1), 0)
    if isinstance(cp, CapacityProcess):
        period = (cp.period if cp.period is not None else 1.0) / net.slot_seconds
        return two_state_path(rng, horizon, cp.tau / net.slot_seconds, cp.mode, period, cp.initial, cp.rate_ratio)
    return build_path(cp, rng, horizon, net.link_rate_bps / (CELL_BYTES * 8), offset=port.capacity_offset)


def draw_replication(net: Network, kin: dict, rng: np.random.Generator) -> None:
    """Fill in the random inputs of one replication in ``kin`` (:func:`kernel_inputs`), in
    this order of draws from ``rng``: every port's capacity path (port order: ``ptimes``,
    ``pseq``, ``plev``, ``PP_INITSTATE``), the key of the GFR lottery (``G_SEED``), and with
    ``start_jitter`` > 0 the connections' start slots (``CP_START``)."""
    horizon = float(kin["gpar"][L.G_NSLOTS]) + 1.0
    paths = []
    for p, port in enumerate(net.ports):
        paths.append(port_path(net, port, rng, horizon))
        kin["ppar"][p, L.PP_INITSTATE] = paths[-1].state0
    width = max(x.times.size for x in paths)
    nlev = max(x.levels.size for x in paths)
    pt2 = np.full((len(paths), width), np.inf)
    ps2 = np.zeros((len(paths), width), dtype=np.int64)
    pl2 = np.zeros((len(paths), nlev))
    for p, x in enumerate(paths):
        pt2[p, :x.times.size] = x.times
        ps2[p, :x.states.size] = x.states
        pl2[p, :x.levels.size] = x.levels
    kin["ptimes"] = pt2
    kin["pseq"] = ps2
    kin["plev"] = pl2
    kin["gpar"][L.G_SEED] = int(rng.integers(0, 2**62))
    if net.start_jitter > 0:
        # connection start times, uniform on [0, start_jitter) (CHOICE, docs/network.md)
        kin["cpar"][:, L.CP_START] = np.floor(rng.uniform(0.0, net.start_jitter, size=kin["cpar"].shape[0])
                                              / net.slot_seconds).astype(np.int64)
