"""The seeds' UBR+, GFR and threshold networks (seeds 000, 001, 002), with per-parameter
provenance: ``seed000_network``, ``seed001_network``, ``seed002_network`` and the paper tables
they are compared with (names in :mod:`.catalogue`)."""

from __future__ import annotations

from ..network import DropPolicy, Network, Port, TcpParams, VbrSource, Vc

__all__ = ["seed000_network", "seed001_network", "seed002_network"]

LINK_BPS = 155.52e6
# CHOICE (all presets): connections start at independent uniform times on [0, 10 ms), drawn
# anew per replication -- the papers do not say; without it a network with no random
# capacity is deterministic and replications would coincide
START_JITTER = 0.01


# ---- seed 000 (Goyal et al., GR for UBR+) ---------------------------------------------------
SEED000_CONFIGS = {
    "lan": dict(delay=5e-6, mss=512, window=65536, duration=10.0, buffers=(1000, 3000)),
    "wan": dict(delay=5e-3, mss=512, window=600000, duration=20.0, buffers=(12000, 36000)),
    "sat": dict(delay=275e-3, mss=9180, window=8704000, duration=40.0, buffers=(200000, 600000)),
}
_TCP000 = {"sack": "sack", "reno": "reno", "vanilla": "timeout-only"}
_POL000 = {"ubr": "tail", "epd": "epd", "sd": "sd"}

# Table 1 (efficiency) and Table 2 (fairness): (config, buffer, vbr period ms) -> (UBR, EPD, SD)
TABLE1 = {("lan", 1000, 300): (0.71, 0.88, 0.98), ("lan", 3000, 300): (0.83, 0.91, 0.92),
          ("lan", 1000, 100): (0.89, 0.97, 0.95), ("lan", 3000, 100): (0.96, 0.95, 0.96),
          ("lan", 1000, 50): (0.97, 0.93, 0.93), ("lan", 3000, 50): (0.95, 0.97, 0.97),
          ("wan", 12000, 300): (0.42, 0.43, 0.61), ("wan", 36000, 300): (0.55, 0.52, 0.96),
          ("wan", 12000, 100): (0.72, 0.58, 0.70), ("wan", 36000, 100): (0.95, 0.97, 0.97),
          ("wan", 12000, 50): (0.97, 0.65, 0.73), ("wan", 36000, 50): (0.97, 0.98, 0.98)}
TABLE2 = {("lan", 1000, 300): (0.21, 0.20, 0.20), ("lan", 3000, 300): (0.95, 0.99, 0.99),
          ("lan", 1000, 100): (0.21, 0.20, 0.99), ("lan", 3000, 100): (0.91, 0.93, 0.96),
          ("lan", 1000, 50): (0.20, 0.21, 0.96), ("lan", 3000, 50): (0.93, 0.99, 1.00),
          ("wan", 12000, 300): (0.99, 0.97, 0.82), ("wan", 36000, 300): (0.88, 0.97, 0.63),
          ("wan", 12000, 100): (0.99, 0.96, 0.93), ("wan", 36000, 100): (1.00, 0.88, 0.89),
          ("wan", 12000, 50): (0.92, 0.98, 0.97), ("wan", 36000, 50): (1.00, 0.97, 0.80)}
# Tables 3-4, SACK rows: (config, sources, buffer, GR) -> efficiency (UBR, EPD, SD)
TABLE34_SACK = {
    ("lan", 5, 1000, 0.5): (0.26, 0.85, 0.96), ("lan", 5, 1000, 0.1): (0.98, 0.57, 0.75),
    ("lan", 5, 1000, 0.0): (0.71, 0.88, 0.98), ("lan", 5, 3000, 0.5): (0.96, 0.97, 0.95),
    ("lan", 5, 3000, 0.1): (0.93, 0.89, 0.99), ("lan", 5, 3000, 0.0): (0.83, 0.91, 0.92),
    ("lan", 15, 1000, 0.5): (0.38, 0.74, 0.92), ("lan", 15, 1000, 0.1): (0.49, 0.76, 0.91),
    ("lan", 15, 1000, 0.0): (0.57, 0.98, 0.90), ("lan", 15, 3000, 0.5): (0.90, 0.96, 0.92),
    ("lan", 15, 3000, 0.1): (0.61, 0.94, 0.96), ("lan", 15, 3000, 0.0): (0.43, 0.86, 0.95),
    ("wan", 5, 12000, 0.5): (0.95, 0.93, 0.94), ("wan", 5, 12000, 0.1): (0.87, 0.66, 0.69),
    ("wan", 5, 12000, 0.0): (0.42, 0.43, 0.61), ("wan", 5, 36000, 0.5): (0.97, 0.99, 0.99),
    ("wan", 5, 36000, 0.1): (0.96, 0.98, 0.96), ("wan", 5, 36000, 0.0): (0.55, 0.52, 0.96),
    ("wan", 15, 12000, 0.5): (0.88, 0.85, 0.90), ("wan", 15, 12000, 0.1): (0.72, 0.61, 0.76),
    ("wan", 15, 12000, 0.0): (0.64, 0.48, 0.58), ("wan", 15, 36000, 0.5): (0.96, 0.95, 0.97),
    ("wan", 15, 36000, 0.1): (0.95, 0.94, 0.97), ("wan", 15, 36000, 0.0): (0.93, 0.72, 0.95),
}


def seed000_network(config: str = "wan", sources: int = 5, buffer: int | None = None, vbr_period: float = 0.3,
                    gr: float = 0.0, policy: str = "sd", tcp: str = "sack", duration: float | None = None) -> Network:
    """Seed 000's N-source configuration (Fig. 3) with a VBR on/off source (Sec. 4.1, 5).

    ``config`` 'lan' / 'wan' / 'sat'; ``policy`` 'ubr' (tail drop), 'epd', 'sd';
    ``tcp`` 'sack', 'reno', 'vanilla'; ``vbr_period`` the on (= off) time in seconds, or
    0 for no VBR source.
    """
    if config not in SEED000_CONFIGS:
        raise ValueError(f"config={config!r} is invalid: must be one of 'lan', 'wan', 'sat'")
    if policy not in _POL000:
        raise ValueError(f"policy={policy!r} is invalid: must be one of 'ubr', 'epd', 'sd'")
    if tcp not in _TCP000:
        raise ValueError(f"tcp={tcp!r} is invalid: must be one of 'sack', 'reno', 'vanilla'")
    c = SEED000_CONFIGS[config]
    k = buffer if buffer is not None else c["buffers"][0]
    pol = DropPolicy(_POL000[policy], threshold=0.9 * k if policy in ("epd", "sd") else None,
                     z=0.8 if policy == "sd" else None)
    port = Port(rate=1.0, ubr_buffer=k, ubr_policy=pol, gr=gr, name="switch 1 -> switch 2")
    if config == "sat":
        access, egress = 5e-6, 275e-3 + 5e-6         # 1 km to the switches; 275 ms satellite hop
    else:
        access, egress = c["delay"], 2 * c["delay"]  # three links of the same delay
    vcs = tuple(Vc(route=(0,), category="ubr", pcr=1.0, access_delay=access, egress_delay=egress,
                   name=f"TCP {i + 1}") for i in range(sources))
    vbr = (VbrSource(route=(0,), rate=1.0, on=vbr_period, off=vbr_period, name="VBR"),) if vbr_period > 0 else ()
    tcpp = TcpParams(variant=_TCP000[tcp], wmax=c["window"] // c["mss"], rto="estimator", granularity=0.1,
                     rto_min=0.2, rto_initial=1.0, delayed_ack=False, dupthresh=3)
    return Network(ports=(port,), vcs=vcs, vbr=vbr, tcp=tcpp, link_rate_bps=LINK_BPS, payload_bytes=c["mss"],
                   duration=duration if duration is not None else c["duration"], warmup=0.0,
                   start_jitter=START_JITTER)


PROVENANCE_000 = {
    "start times": "CHOICE: uniform on [0, 10 ms), independent per connection and replication",
    "topology": "stated: N-source configuration, Fig. 3; all links 155.52 Mbps; one VBR source end to end",
    "link delays": "stated: 5 us (LAN), 5 ms (WAN) per link; satellite 275 ms between switches, 1 km to "
                   "the switches (CHOICE: 5 us/km)",
    "bottleneck": "CHOICE: switch 1's output port towards switch 2 is the only congested port; the access "
                  "and egress links are folded into the ACK delay (docs/network.md)",
    "segment size": "stated: 512 B (LAN, WAN), 9180 B (satellite); headers 20+20+8+8 B (Sec. 4.2)",
    "receiver window": "stated: 64 KB (LAN), 600000 B (WAN), 8704000 B (satellite); in whole segments",
    "durations": "stated: 10 s (LAN), 20 s (WAN), 40 s (satellite); throughput over the whole run (warm-up 0)",
    "delayed ACK": "stated: off",
    "VBR": "stated: on = off = 300/100/50 ms at 100 % of the link; CHOICE: first on period at t = 0",
    "GR scheduler": "stated: on average GR x N of every N cells from UBR, unused VBR capacity to UBR; "
                    "CHOICE: a credit counter (+GR per cell slot while UBR is backlogged, UBR served at >= 1)",
    "EPD threshold": "CHOICE: R = 0.9 K (unstated)",
    "Selective Drop": "CHOICE: R = 0.9 K, Z = 0.8 (unstated; formula of ref. [9])",
    "TCP timers": "stated: coarse timer, 'ticks of 100 ms'; CHOICE: RFC 6298 estimator, granularity 100 ms, "
                  "RTO min 200 ms, initial RTO 1 s, max 60 s",
    "duplicate ACK threshold": "CHOICE: 3 (RFC 2001, ref. [23])",
    "initial window": "CHOICE: 1 segment; initial ssthresh = receiver window",
    "SACK": "stated: Sec. 2.1 (retransmit lost packets before new ones); CHOICE: Fall & Floyd pipe algorithm",
    "VBR queue": "CHOICE: 131072 cells (large enough that VBR is never dropped)",
}


# ---- seed 001 (Aarstad et al., EXPERT testbed) --------------------------------------------
def seed001_network(connections: int = 4, buffer: int = 1451, mtu: int = 1500, b: float | None = 1.0,
                    granularity: float = 0.2, delayed_ack: bool = True, dupthresh: int = 3,
                    duration: float = 180.0) -> Network:
    """Seed 001's testbed (Sec. 3, Fig. 1): ``connections`` TCPs over UBR into one port.

    ``b``: EPD with EPD_th = K - b MTU (Sec. 4.2; ``b = 0`` is plain PPD); None for PPD.
    """
    payload = mtu - 40
    probe = Network(payload_bytes=payload)
    frame_cells = probe.cells_per_frame
    if b is None or b == 0:
        pol = DropPolicy("ppd")
    else:
        thr = buffer - b * frame_cells
        if thr <= 0:
            raise ValueError(f"b={b!r} is invalid: EPD_th = buffer - b MTU must be positive ({thr} cells)")
        pol = DropPolicy("epd", threshold=float(thr))
    port = Port(rate=37.44 / 155.52, ubr_buffer=buffer, ubr_policy=pol, name="ASX200 UBR output port")
    vcs = tuple(Vc(route=(0,), category="ubr", pcr=1.0, access_delay=1e-4, egress_delay=1.5e-4)
                for _ in range(connections))
    tcp = TcpParams(variant="reno", wmax=52224 // payload, rto="estimator", granularity=granularity,
                    rto_min=2 * granularity, delayed_ack=delayed_ack, dupthresh=dupthresh)
    return Network(ports=(port,), vcs=vcs, tcp=tcp, link_rate_bps=LINK_BPS, payload_bytes=payload,
                   duration=duration, warmup=0.0, start_jitter=START_JITTER)


PROVENANCE_001 = {
    "start times": "CHOICE: uniform on [0, 10 ms), independent per connection and replication",
    "topology": "stated: 4 senders -> Fore ASX200 -> 4 receivers, bottleneck 37.44 Mbit/s (Sec. 3)",
    "host links": "stated: 100 Mbit/s TAXI or 155.52 Mbit/s; CHOICE: 155.52 Mbit/s PCR for every sender",
    "round trip": "CHOICE: 0.5 ms (local network, unstated)",
    "receiver window": "stated: 52224 B (about 1000 cells); in whole segments of MTU - 40 B",
    "MTU": "stated: 1500 B (also 4352, 9180 in Sec. 4.1)",
    "buffer": "stated: 725 to 2176 cells; CHOICE default 1451",
    "EPD": "stated: EPD_th = buffer - b MTU, b = 0..3 (Sec. 4.2)",
    "PPD": "stated: the rest of the frame is discarded; CHOICE: the EOM cell is discarded too (docs)",
    "TCP": "stated: Solaris 2.5.1 (Reno: fast retransmit/recovery, dupack threshold 3), timer granularity 200 ms",
    "delayed ACK": "stated: RFC 1122 (every second segment, timer); CHOICE: on, 200 ms timer",
    "duration": "stated: 180 s",
    "per-VC queueing": "stated: the ASX200 queues per VC with weighted round robin; CHOICE: one FIFO "
                       "UBR queue (the paper studies the shared-buffer EPD/PPD behaviour)",
}


# ---- seed 002 (Goyal et al., GFR) ------------------------------------------------------------
TABLE1_002 = {1: (305, 611, 917, 1223, 1528), 2: (458, 917, 1375, 1834, 2293),
              3: (611, 1223, 1834, 2446, 3057), 4: (764, 1528, 2293, 3057, 3822)}
TABLE3_002 = {1: (1.00, 0.98, 0.98, 0.98, 1.02), 2: (1.03, 1.01, 1.00, 0.99, 0.98),
              3: (1.02, 1.03, 1.00, 0.98, 0.97), 4: (1.08, 1.04, 1.02, 0.88, 1.01)}
TABLE4_002 = {1: (152, 305, 458, 611, 764), 2: (305, 611, 917, 1223, 1528), 3: (611, 1223, 1834, 2446, 3057)}
TABLE5_002 = {1: (1.04, 1.05, 0.97, 0.93, 1.03), 2: (1.01, 1.02, 0.99, 1.00, 0.99),
              3: (1.16, 1.06, 1.05, 1.13, 0.80)}


def seed002_network(kind: str = "gfr", experiment: int = 1, duration: float = 20.0) -> Network:
    """Seed 002: ``kind='threshold'`` (Sec. 3, 15 VCs of one TCP, Table 1 thresholds of
    ``experiment`` 1-4) or ``kind='gfr'`` (Sec. 4, 5 VCs of 3 merged TCPs, Table 4 column
    ``experiment`` 1-3)."""
    tcp = TcpParams(variant="sack", wmax=600000 // 1024, rto="estimator", granularity=0.1, rto_min=0.2,
                    delayed_ack=False, dupthresh=3)
    k = 48000
    if kind == "threshold":
        if experiment not in TABLE1_002:
            raise ValueError(f"experiment={experiment!r} is invalid: must be 1, 2, 3 or 4")
        thr = TABLE1_002[experiment]
        port = Port(ubr_buffer=k, ubr_policy=DropPolicy("threshold"), name="switch 1 -> switch 2")
        vcs = tuple(Vc(route=(0,), category="ubr", access_delay=5e-3, egress_delay=10e-3,
                       threshold=float(thr[i // 3]), name=f"TCP {i + 1}") for i in range(15))
    elif kind == "gfr":
        if experiment not in TABLE4_002:
            raise ValueError(f"experiment={experiment!r} is invalid: must be 1, 2 or 3")
        thr = TABLE4_002[experiment]
        port = Port(ubr_buffer=k, ubr_policy=DropPolicy("gfr", threshold=0.9 * k, z=1.5),
                    name="backbone switch 1 -> switch 2")
        vcs = tuple(Vc(route=(0,), category="gfr", connections=3, access_delay=5e-3, egress_delay=10e-3,
                       threshold=float(thr[i]), weight=1.0, name=f"VC {i + 1}") for i in range(5))
    else:
        raise ValueError(f"kind={kind!r} is invalid: must be 'threshold' or 'gfr'")
    return Network(ports=(port,), vcs=vcs, tcp=tcp, link_rate_bps=LINK_BPS, payload_bytes=1024,
                   duration=duration, warmup=0.0, start_jitter=START_JITTER)


PROVENANCE_002 = {
    "start times": "CHOICE: uniform on [0, 10 ms), independent per connection and replication",
    "topology": "stated: N-source configuration (Fig. 4), 15 TCPs; Sec. 4: 5 VCs of 3 TCPs merged at local "
                "switches without interleaving frames (Fig. 7)",
    "round trip": "stated: 30 ms (Sec. 2, Fig. 3); CHOICE: the same for Fig. 7 (5 ms links)",
    "segment size": "stated: 1024 B (mss.1024 in the figure captions)",
    "receiver window": "stated: rcv_win 37500 x window scale 2^4 = 600000 B (captions)",
    "TCP": "stated: SACK TCP; timer granularity 100 ms (captions); CHOICE: RTO min 200 ms, dupthresh 3",
    "buffer": "stated: K = 48000 cells (Sec. 3); CHOICE: the same in Sec. 4",
    "thresholds": "stated: Table 1 (Sec. 3), Table 4 (Sec. 4)",
    "threshold policy": "stated: one packet dropped each time the VC's occupancy crosses its threshold; "
                        "CHOICE: re-armed when a frame arrives below the threshold",
    "GFR": "stated: pseudocode of Sec. 4, Z = 1.5; CHOICE: R = 0.9 K (caption gfr_r=0.9), W_i = 1",
    "duration": "stated: stop time 20 s (captions: stoptime 19999000 us)",
    "link rate": "stated: 155.52 Mbps; the paper's 126 Mbps maximum TCP throughput implies 149.76 Mbps of "
                 "cell payload (SONET); CHOICE: 155.52 Mbps of cells as in seed 000 (ratios are unaffected)",
    "local switches": "CHOICE: the merging edge device is the VC source at 155.52 Mbps (not congested, "
                      "as stated)",
}
