r"""TCP over ATM accounting: AAL5 encapsulation, cell padding, TCP-layer maximum throughput.

A TCP segment of ``mss`` data bytes is carried as one AAL5 CPCS-PDU:

    mss + TCP header (20) + IP header (20) + LLC/SNAP (8, RFC 1483) + AAL5 trailer (8)

padded up to a multiple of 48 bytes, i.e. :math:`n = \lceil (\text{mss} + 56)/48\rceil`
cells of 53 bytes.  The TCP-layer efficiency is :math:`\text{mss}/(53n)` of the ATM-layer
rate.  With SONET STS-3c framing, the ATM layer gets 26/27 of the line rate (149.76 of
155.52 Mbps: 260 of the 270 columns of an STS-3c frame carry cells).

Reference values: seed 000 (512-byte segments) "80.5% ... 125.2 Mbps on a 155.52 Mbps link"
(no SONET framing in its arithmetic); seed 002 (1024-byte segments) "126 Mbps maximum
possible TCP throughput for a 155.52 Mbps link" (with SONET: 125.8 Mbps); seed 004: cell
header overhead 5/53, "asymptotic throughput approximately 90%".
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validate import check_int, check_real
from ..units import CELL_BYTES, CELL_PAYLOAD_BYTES

__all__ = [
    "CELL_BYTES",
    "CELL_PAYLOAD",
    "SONET_PAYLOAD_FRACTION",
    "Encapsulation",
    "cells_per_packet",
    "padding_bytes",
    "tcp_efficiency",
    "tcp_max_throughput",
    "atm_cell_efficiency",
]

CELL_PAYLOAD = CELL_PAYLOAD_BYTES
#: STS-3c: 260 of 270 columns carry the payload -> 149.76 of 155.52 Mbit/s
SONET_PAYLOAD_FRACTION = 26.0 / 27.0


@dataclass(frozen=True)
class Encapsulation:
    """Per-packet overhead bytes (defaults: TCP 20, IP 20, LLC/SNAP 8, AAL5 trailer 8)."""

    tcp_header: int = 20
    ip_header: int = 20
    llc_snap: int = 8
    aal5_trailer: int = 8

    def __post_init__(self):
        for name in ("tcp_header", "ip_header", "llc_snap", "aal5_trailer"):
            check_int(name, getattr(self, name), 0)

    @property
    def total(self) -> int:
        return self.tcp_header + self.ip_header + self.llc_snap + self.aal5_trailer


DEFAULT = Encapsulation()
#: the largest AAL5 CPCS-PDU payload (ITU-T I.363.5), bytes: LLC/SNAP, IP, TCP and the segment's data
AAL5_MAX_PAYLOAD = 65535


def _mss(mss, encap: Encapsulation) -> int:
    """``mss`` checked: at least 1 byte, and one AAL5 frame (its payload at most 65,535 bytes)."""
    top = AAL5_MAX_PAYLOAD - (encap.total - encap.aal5_trailer)
    m = check_int("mss", mss, 1)
    if m > top:
        raise ValueError(f"mss={m} is invalid: must be in [1, {top}] bytes (one AAL5 frame carries at most "
                         f"{AAL5_MAX_PAYLOAD} payload bytes, {encap.total - encap.aal5_trailer} of them TCP/IP and "
                         "LLC/SNAP headers)")
    return m


def cells_per_packet(mss, encap: Encapsulation = DEFAULT) -> int:
    """Cells carrying one segment: :math:`\\lceil(\\text{mss} + \\text{overhead})/48\\rceil`."""
    m = _mss(mss, encap)
    return -(-(m + encap.total) // CELL_PAYLOAD)


def padding_bytes(mss, encap: Encapsulation = DEFAULT) -> int:
    """AAL5 pad bytes: ``48 * cells - (mss + overhead)`` (0..47)."""
    m = _mss(mss, encap)
    return CELL_PAYLOAD * cells_per_packet(m, encap) - (m + encap.total)


def tcp_efficiency(mss, encap: Encapsulation = DEFAULT, *, include_headers=False) -> float:
    """TCP-layer bytes per ATM-layer byte: ``mss / (53 * cells)``.

    ``include_headers=True`` counts the TCP/IP headers as useful (seed 004's efficiency
    "includes the TCP/IP headers in the throughput").
    """
    m = _mss(mss, encap)
    useful = m + (encap.tcp_header + encap.ip_header if include_headers else 0)
    return useful / (CELL_BYTES * cells_per_packet(m, encap))


def tcp_max_throughput(link_rate, mss, *, sonet=False, encap: Encapsulation = DEFAULT, include_headers=False) -> float:
    """Maximum TCP-layer throughput of a link, in the unit of ``link_rate``.

    Parameters
    ----------
    link_rate : float > 0
        Line rate (e.g. 155.52 Mbps) if ``sonet=True``, else the ATM-layer cell rate in
        bit/s units (the line rate when framing is ignored, as seed 000 does).
    mss : int >= 1
        TCP segment data bytes.
    sonet : bool, optional(default=False)
        Apply STS-3c framing (x 26/27).
    """
    r = check_real("link_rate", link_rate, 0.0, low_open=True)
    atm = r * (SONET_PAYLOAD_FRACTION if sonet else 1.0)
    return atm * tcp_efficiency(mss, encap, include_headers=include_headers)


def atm_cell_efficiency() -> float:
    """Payload fraction of a cell, 48/53 (seed 004 footnote 5: "approximately 90%")."""
    return CELL_PAYLOAD / CELL_BYTES
