"""Array layouts of both cell-level kernels and of the one TCP (private).

The general network kernel (:mod:`tcpabr_model.sim.kernels.general`), the single-bottleneck fast
path (:mod:`tcpabr_model.sim.kernels.fast_path`) and the TCP hooks (:mod:`tcpabr_model.sim.tcp.connection`)
take plain arrays; the column of each quantity is one of the module constants below (numba
freezes them at compile time).  Columns marked *fast path* are used only by the
single-bottleneck kernel (the general kernel keeps the same quantities per VC or per port).
Extending a state record means appending a column *before* the ``*_N*`` sentinel and
bumping the sentinel (see ``docs/network.md``, "Extension points for ABR").
"""

from __future__ import annotations

import numpy as np

BIG = np.int64(2**62)

# ---- cell kinds (bits 0-2 of a cell's info word) --------------------------------------
KIND_DATA = 0       # a cell of an AAL5 frame of a TCP segment (or an IP packet, TCP alone)
KIND_VBR = 1        # a cell of a VBR/CBR on-off source
KIND_RMF = 2        # forward RM cell (reserved for the ABR extension)
KIND_RMB = 3        # backward RM cell (reserved for the ABR extension)
INFO_KIND_MASK = 7
INFO_EOM = 8        # end-of-message (last cell of the frame)
INFO_TAG = 16       # tagged (CLP = 1) cell
INFO_CIDX_SHIFT = 8  # cell index within its frame, bits 8..

# ---- service categories (queue index at a port, also the priority order) -------------
CL_VBR = 0
CL_ABR = 1
CL_UBR = 2          # UBR, UBR+ and GFR share this queue
NCLASS = 3

# ---- drop policies (frame admission at a class queue) --------------------------------
POL_TAIL = 0        # drop cells only when the buffer is full (no frame awareness)
POL_PPD = 1         # partial packet discard after an overflow
POL_EPD = 2         # early packet discard (threshold R) + PPD
POL_SD = 3          # Selective Drop (per-VC accounting) + PPD
POL_FBA = 4         # Fair Buffer Allocation (per-VC accounting) + PPD
POL_GFR = 5         # seed 002 Section 4 buffer management + PPD
POL_THRESH = 6      # seed 002 Section 3: one frame dropped per upward crossing of R_i + PPD
NPOL = 7

# ---- policy parameter columns (qfpar[p, k, :]) ---------------------------------------
QP_R = 0            # congestion threshold R, cells
QP_Z = 1            # Z (SD, FBA, GFR)
QP_NPAR = 2

# ---- TCP variants ---------------------------------------------------------------------
TCP_TIMEOUT_ONLY = 0   # slow start / congestion avoidance, coarse timeout only ("Vanilla")
TCP_RENO = 1
TCP_SACK = 2
TCP_NEWRENO = 3        # RFC 6582 (names and ids: tcpabr_model.sim.tcp.variants), the Impatient timer
TCP_NEWRENO_STEADY = 4  # NewReno with the Slow-but-Steady timer of Fall & Floyd 1996 (RFC 6582 Sec. 4)

# ---- global integer parameters (gpar) ------------------------------------------------
G_NSLOTS = 0
G_WARMUP = 1
G_MEAS = 2          # measurement / rate-allocation interval, slots
G_RTOMODE = 3       # 0 fixed, 1 RFC 6298 estimator
G_GRAN = 4
G_RTOMIN = 5
G_RTOMAX = 6
G_DELACK = 7
G_DELACKTO = 8
G_DUPTHRESH = 9
G_RTOINIT = 10
G_SEED = 11         # key of the counter-based uniform generator (GFR drop lottery)
G_UPF = 12          # fast path: units (cells) per frame
G_BUF = 13          # fast path: bottleneck buffer in units, counting the unit in service
G_EPD = 14          # fast path: EPD threshold in units (-1: partial packet discard only)
G_SAMPLE = 15       # fast path: sampling interval of the recorded series, slots
G_INITSTATE = 16    # fast path: capacity state at slot 0 (0 high, 1 low)
G_NPAR = 17

# ---- global float parameters (gfpar) -------------------------------------------------
GF_SLOTB = 0        # bytes per slot at the reference rate (53)
GF_UNITB = 1        # bytes per transmission unit (53 for cells, the IP packet for TCP alone)
GF_LOW = 2          # fast path: low capacity as a fraction of the high one
GF_RATE = 3         # fast path: bottleneck high rate / one cell per slot (TCP alone: slot_bytes / 53)
GF_NPAR = 4

# ---- per-port integer parameters (ppar) ----------------------------------------------
PP_LINKDELAY = 0    # propagation delay of the port's outgoing link to the next switch, slots
PP_INITSTATE = 1    # capacity state at slot 0 (0 high, 1 low)
PP_NPAR = 2

# ---- per-port float parameters (pfpar) -----------------------------------------------
PF_RATE = 0         # link rate / reference rate
PF_LOW = 1          # low capacity / high capacity (1 for a constant-rate port)
PF_GR = 2           # guaranteed fraction of the link for the UBR class
PF_NETVBR = 3       # 1: the rate-allocation measurement is the capacity left by VBR
PF_NPAR = 4

# ---- per-port state (pst, int64) -----------------------------------------------------
PS_DROP0 = 0        # cells dropped, per class (PS_DROP0 + k)
PS_SERVED0 = 3      # cells served, per class
PS_SERVEDW0 = 6     # cells served after warm-up, per class
PS_QMAX = 9         # maximum occupancy over all classes (cells)
PS_QMAX0 = 10       # maximum occupancy per class
PS_FDROP = 13       # frames with a cell dropped here (counted once per frame and port)
PS_NSTATE = 14

# ---- per-port float state (pfs) ------------------------------------------------------
PFS_CRED = 0        # service byte credit
PFS_GACC = 1        # GR accumulator (UBR cells owed)
PFS_MEASACC = 2     # capacity integral of the current measurement interval
PFS_CAPTOT = 3      # capacity integral over [0, t) (normalised to the port's high rate)
PFS_CAPWIN = 4      # same over [warmup, t)
PFS_QINT = 5        # integral of occupancy (cells x slots) over [warmup, t)
PFS_NSTATE = 6

# ---- per-VC integer parameters (vpar) ------------------------------------------------
VP_CLASS = 0        # CL_VBR, CL_ABR or CL_UBR
VP_NHOPS = 1        # ports on the route
VP_UPF = 2          # units (cells) per frame
VP_SRCMODE = 3      # SRC_* below
VP_FBPORT = 4       # port whose rate allocation feeds this VC back (SRC_FEEDBACK)
VP_FBDELAY = 5      # feedback delay, slots
VP_M = 6            # EFFCAP M
VP_N = 7            # EFFCAP N
VP_ON = 8           # VBR on period, slots
VP_OFF = 9          # VBR off period, slots
VP_PHASE = 10       # VBR: first switch-on slot
VP_CONN0 = 11       # first connection of the VC (connections of a VC are contiguous)
VP_NCONN = 12       # TCP connections merged on the VC
VP_TAG = 13         # 1: the VC's data cells are tagged (CLP = 1)
VP_NPAR = 14

SRC_FIXED = 0       # fixed rate (UBR/GFR at PCR, TCP alone host link)
SRC_FEEDBACK = 1    # ABR source following INSTCAP/EFFCAP feedback
SRC_CONSTANT = 2    # ABR source held at its initial rate
SRC_VBR = 3         # on/off VBR source
SRC_ABR = 4         # reserved: ABR source with RM cells (ACR rules of the ABR extension)

# ---- per-VC float parameters (vfpar) -------------------------------------------------
VF_RATE = 0         # source rate, bytes/slot (PCR, host link, VBR on-rate)
VF_SHARE = 1        # share of the fed-back capacity
VF_INITRATE = 2     # initial ACR / constant rate, fraction of the feedback port's rate
VF_MCR = 3          # minimum cell rate of an INSTCAP/EFFCAP source, fraction of the feedback port's rate
VF_NPAR = 4

# ---- per-VC integer state (vst) ------------------------------------------------------
V_CURC = 0          # connection whose frame is being sent (-1 none)
V_RR = 1            # round-robin pointer over the VC's connections (offset)
V_ON = 2            # VBR: 1 while on
V_NEXTTOG = 3       # VBR: next on/off switch, slot
V_FBHEAD = 4
V_FBCNT = 5
V_DEXP = 6          # destination reassembly: next expected cell index
V_DCORR = 7         # destination: current frame corrupted
V_DCONN = 8         # destination: connection of the current frame
V_DSEQ = 9          # destination: sequence number of the current frame
V_CSENT = 10        # cells (units) emitted by the source
V_CDELIV = 11       # cells that reached the destination
V_FCORR = 12        # frames that reached the destination corrupted (discarded by AAL5)
V_VBRSENT = 13      # VBR cells emitted
V_CDROP = 14        # cells of the VC dropped at any port
V_VBRDELIV = 15     # VBR cells that reached the destination
V_NSTATE = 16

# ---- per-VC float state (vfs) --------------------------------------------------------
VS_ACR = 0          # allowed / current source rate, bytes/slot
VS_CRED = 1         # source byte credit
VS_NSTATE = 2

# ---- per-connection integer parameters (cpar) ----------------------------------------
CP_VC = 0
CP_ACKDELAY = 1     # slots from the frame's departure at its last port to the ACK's arrival
CP_WMAX = 2         # receiver window, segments
CP_RTOFIX = 3       # fixed RTO, slots (fixed mode)
CP_VARIANT = 4      # TCP_*
CP_UPF = 5          # units per frame (copy of the VC's)
CP_START = 6        # slot at which the connection starts sending
CP_FBDELAY = 7      # fast path: feedback delay, slots
CP_M = 8            # fast path: EFFCAP M (measurement intervals per average)
CP_N = 9            # fast path: EFFCAP N (averages in the minimum)
CP_ABR = 10         # fast path: 1 source follows feedback; 2 ABR source at a constant rate; 0 host link
CP_NPAR = 11

# ---- per-connection float parameters (cfpar) -----------------------------------------
CF_SSTHRESH0 = 0
CF_IW = 1           # initial congestion window, segments
CF_SHARE = 2        # fast path: share of the capacity estimate fed back
CF_HOSTRATE = 3     # fast path: source rate in bytes/slot when CP_ABR == 0
CF_INITRATE = 4     # fast path: allowed rate (normalised capacity) before any feedback
CF_MCR = 5          # fast path: minimum cell rate (normalised capacity), ACR >= it
CF_NPAR = 6

# ---- per-connection integer state (st) -----------------------------------------------
S_UNA = 0
S_NXT = 1
S_MAX = 2
S_DUP = 3
S_INREC = 4
S_RTOEXP = 5
S_RTTACT = 6
S_RTTSEQ = 7
S_RTTSTART = 8
S_RCVNXT = 9
S_DAPEND = 10
S_DAEXP = 11
S_SQHEAD = 12
S_SQCNT = 13
S_SQCIDX = 14
S_SQCELLS = 15
S_AKHEAD = 16
S_AKCNT = 17
S_PIPE = 18         # SACK: estimated segments in flight during recovery
S_RECOVER = 19      # highest sequence sent (+1) at the last timeout or recovery start
S_HIGHSACK = 20     # SACK: 1 + highest sequence reported SACKed
S_RTXNEXT = 21      # SACK: where the next hole search starts
# counters
S_TIMEOUTS = 22
S_FASTRTX = 23
S_SEGSENT = 24
S_RETX = 25
S_GOOD = 26
S_GOODALL = 27
S_CSENT = 28
S_CDROP = 29
S_FDROP = 30
S_FDELIV = 31
S_ACKS = 32
S_FSENT = 33
S_STARTED = 34      # 1 once the connection has started (start time CP_START)
S_FBHEAD = 35       # fast path: feedback ring head
S_FBCNT = 36        # fast path: feedback messages in flight
S_PPDTX = 37        # fast path: 1 while the rest of the head frame is discarded at the bottleneck
S_CSERVED = 38      # fast path: cells served by the bottleneck
S_PARTIALS = 39     # newreno: partial ACKs in the current recovery (the Impatient timer rule)
S_PRRDEL = 40       # sack: PRR's prr_delivered, segments delivered since recovery start (RFC 6937)
S_PRROUT = 41       # sack: PRR's prr_out, segments sent since recovery start
S_RECOVFS = 42      # sack: PRR's RecoverFS, the flight at recovery start
S_LOSTEND = 43      # sack: unSACKed segments below it are lost (dupthresh SACKed above, RFC 6675 IsLost)
S_RTOUNA = 44       # 1 + snd_una at the last timeout (0: none): a repeated timeout of that segment keeps ssthresh
# timeout kinds (counters; docs/simulator.md "Timeout kinds"): each timeout is counted once in S_TIMEOUTS and
# at most once here, in this order of precedence
S_TOREPEAT = 45     # the same segment again (its retransmission was not acknowledged within the RTO)
S_TOHOLE = 46       # a later hole: snd_una below the recover point of the previous timeout or recovery
S_TOSS = 47         # otherwise, snd_una sent in slow start (below S_SSEXIT - 1, or S_SSEXIT = 0)
S_SSEXIT = 48       # 1 + snd_max when cwnd last reached ssthresh; 0 while in slow start since the last timeout
S_TODROP = 49       # the connection's dropped frames at its last timeout
S_TONODROP = 50     # otherwise, no frame of the connection dropped since its previous timeout: a silence of its ACKs
S_NSTATE = 51

# ---- per-connection float state (fs) -------------------------------------------------
F_CWND = 0
F_SSTH = 1
F_SRTT = 2
F_RTTVAR = 3
F_RTO = 4           # slots (estimator mode)
F_ACR = 5           # fast path: allowed rate, bytes per slot
F_CRED = 6          # fast path: source byte credit
F_NSTATE = 7

# ---- global outputs (gout) -----------------------------------------------------------
O_ERR = 0           # 0 ok; 1 segmentation ring; 2 ACK ring; 3 feedback ring; 4 delay line; 5 VBR ring
O_NMEAS = 1
O_CAPTOT = 2        # fast path: integral of normalised capacity over [0, nslots), slots
O_CAPWIN = 3        # fast path: same over [warmup, nslots)
O_QEND = 4          # fast path: units in the bottleneck at the end
O_NSAMP = 5         # fast path: samples recorded
O_QMAX = 6          # fast path: largest bottleneck occupancy, units (the network's PS_QMAX)
O_QINT = 7          # fast path: occupancy integral over [warmup, nslots) (PFS_QINT)
O_SERVEDW = 8       # fast path: units served in [warmup, nslots) (PS_SERVEDW0 + class)
O_NOUT = 9

ERR_NAMES = {1: "segmentation queue", 2: "ACK ring", 3: "feedback ring", 4: "link delay line",
             5: "internal queue ring"}
