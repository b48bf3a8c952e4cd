"""Units of the cell-level simulators: the one place for the time unit and the packet and
cell sizes (``docs/simulator.md``, "Units and the paper's normalisation").

The core paper (seed 004, Sections V-VI) quotes rates on the *segment payload* basis:
100 kB/s with 500-byte packets, Delta = 200 ms = "40 time units", so its **time unit** is one
packet time at the high rate, ``payload_bytes / high_rate`` = 5 ms, and ``delta`` time
units are a pipe of ``delta`` packets in the high state.  This holds in every mode:

* over ATM (INSTCAP, EFFCAP, constant-rate ABR) a packet is one AAL5 frame of
  ``cells_per_frame`` 53-byte cells (12 with the defaults), so the high-state link carries
  12 x 53 = 636 B of cells per time unit (127.2 kB/s);
* for TCP alone a packet is one IP packet (payload + TCP/IP headers, 540 B), so the
  high-state link carries 540 B per time unit (108 kB/s).

Both links deliver 100 kB/s of payload, one packet per time unit, in the high state.  The
simulators' time step (*slot*) is ``time_unit / cells_per_frame`` in both modes (one cell
time over ATM); the link serves :func:`slot_bytes` bytes per slot at the high rate.
"""

from __future__ import annotations

import math

__all__ = ["CELL_BYTES", "CELL_PAYLOAD_BYTES", "cells_per_frame", "time_unit", "slot_bytes",
           "normalized_to_physical", "to_slots", "total_slots"]

CELL_BYTES = 53
CELL_PAYLOAD_BYTES = 48


def cells_per_frame(payload_bytes: int, tcpip_header_bytes: int = 40, llc_snap_bytes: int = 8,
                    aal5_trailer_bytes: int = 8) -> int:
    """AAL5 frame length in cells: ceil((payload + TCP/IP + LLC/SNAP + trailer) / 48)."""
    return math.ceil((payload_bytes + tcpip_header_bytes + llc_snap_bytes + aal5_trailer_bytes)
                     / CELL_PAYLOAD_BYTES)


def time_unit(payload_bytes: int, high_rate: float) -> float:
    """The paper's time unit, seconds: one packet time at the high rate (payload basis)."""
    return payload_bytes / high_rate


def slot_bytes(atm: bool, ip_packet_bytes: int, frame_cells: int) -> float:
    """Bytes the link serves per slot at the high rate: one cell (53 B) over ATM; for TCP
    alone ``ip_packet_bytes / frame_cells``, so that one IP packet takes one time unit
    (``frame_cells`` slots), the same pipe as one frame over ATM."""
    return float(CELL_BYTES) if atm else ip_packet_bytes / frame_cells


def normalized_to_physical(delta, psi: float, payload_bytes: int = 500, high_rate: float = 100e3):
    """(rtt in seconds per connection, tau in seconds) from the paper's ``delta`` (time units,
    scalar or sequence) and ``psi`` = tau / max(delta)."""
    unit = time_unit(payload_bytes, high_rate)
    deltas = tuple(delta) if isinstance(delta, (list, tuple)) else (delta,)
    rtt = tuple(d * unit for d in deltas)
    return rtt, psi * max(rtt)


def to_slots(seconds: float, slot_seconds: float) -> int:
    """Round a time to whole slots (at least 1 for positive times)."""
    v = int(round(seconds / slot_seconds))
    return max(v, 1) if seconds > 0 else v


def total_slots(duration: float, warmup: float, slot_seconds: float) -> int:
    """Slots of one replication: warm-up plus measured duration."""
    return int(round((duration + warmup) / slot_seconds))
