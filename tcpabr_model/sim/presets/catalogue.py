"""The seeds' network configurations, by name, with per-parameter provenance.

Every preset is a :class:`Preset`: the :class:`~tcpabr_model.sim.Network`, a one-line
description, ``provenance`` (parameter -> ``"stated: ..."`` when the paper gives it,
``"CHOICE: ..."`` when it does not and we chose) and ``paper`` (the table values the
configuration is compared with, when the paper has them).

Families (``preset_names()`` lists every name):

``seed000_{lan,wan}_5src_buf{B}_vbr{300,100,50}_{ubr,epd,sd}``
    Tables 1-2 of seed 000 (SACK TCP, VBR on/off with strict priority, GR = 0).
``seed000_{lan,wan}_{5,15}src_buf{B}_gr{0,01,05}_{ubr,epd,sd}_{sack,reno,vanilla}``
    Tables 3-6 (VBR 300 ms on/off, GR = 0, 0.1, 0.5).
``seed000_sat_5src_buf{200000,600000}_gr{0,01,05}_{ubr,epd,sd}_{sack,reno,vanilla}``
    Tables 7-9 (satellite).
``seed000_{lan,wan,sat}_5src_vbr300``
    Short names: 5 sources, the smaller buffer, VBR 300 ms, GR = 0, Selective Drop, SACK.
``seed001_testbed``, ``seed001_testbed_epd_b{0,1,2,3}``, ``seed001_2conn_mtu{1500,4352,9180}_buf{B}``
    Seed 001: 4 TCPs over UBR into a 37.44 Mbit/s port; EPD_th = K - b MTU; the
    two-connection buffer-dimensioning experiment of Sec. 4.1.
``seed002_threshold_15tcp_exp{1,2,3,4}``
    Seed 002 Sec. 3, Tables 1-3: 15 TCPs, one per VC, one frame dropped per threshold
    crossing.
``seed002_gfr_15tcp_{1,2,3}`` (``seed002_gfr_15tcp`` = 1)
    Seed 002 Sec. 4, Tables 4-5: 5 GFR VCs of 3 merged TCPs each, GFR buffer management.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ..network import Network
from .ubr_gfr import (PROVENANCE_000, PROVENANCE_001, PROVENANCE_002, SEED000_CONFIGS, TABLE1, TABLE1_002, TABLE2, TABLE3_002, TABLE34_SACK,
                      TABLE4_002, TABLE5_002, seed000_network, seed001_network, seed002_network)

__all__ = ["Preset", "preset", "preset_names"]


@dataclass(frozen=True)
class Preset:
    """A named configuration of a seed paper."""

    name: str
    network: Network
    description: str
    provenance: dict = field(default_factory=dict)
    paper: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "provenance": dict(self.provenance),
                "paper": dict(self.paper), "network": self.network.to_dict()}



@lru_cache(maxsize=None)
def _registry() -> dict:
    reg = {}

    def g(x):
        return {0.0: "0", 0.1: "01", 0.5: "05"}[x]

    for cfg in ("lan", "wan"):
        for buf in SEED000_CONFIGS[cfg]["buffers"]:
            for per in (300, 100, 50):
                for j, pol in enumerate(("ubr", "epd", "sd")):
                    name = f"seed000_{cfg}_5src_buf{buf}_vbr{per}_{pol}"
                    reg[name] = (lambda cfg=cfg, buf=buf, per=per, pol=pol: seed000_network(
                        cfg, 5, buf, per / 1000, 0.0, pol, "sack"),
                        f"seed 000 Tables 1-2: {cfg.upper()}, 5 SACK sources, {buf} cells, VBR {per} ms, "
                        f"GR 0, {pol}", PROVENANCE_000,
                        {"table": "1-2", "efficiency": TABLE1[(cfg, buf, per)][j],
                         "fairness": TABLE2[(cfg, buf, per)][j]})
        for n in (5, 15):
            for buf in SEED000_CONFIGS[cfg]["buffers"]:
                for gr in (0.0, 0.1, 0.5):
                    for j, pol in enumerate(("ubr", "epd", "sd")):
                        for tcp in ("sack", "reno", "vanilla"):
                            name = f"seed000_{cfg}_{n}src_buf{buf}_gr{g(gr)}_{pol}_{tcp}"
                            paper = {"table": "3" if cfg == "lan" else "4"}
                            if tcp == "sack":
                                paper["efficiency"] = TABLE34_SACK[(cfg, n, buf, gr)][j]
                            reg[name] = (lambda cfg=cfg, n=n, buf=buf, gr=gr, pol=pol, tcp=tcp: seed000_network(
                                cfg, n, buf, 0.3, gr, pol, tcp),
                                f"seed 000 Tables 3-6: {cfg.upper()}, {n} {tcp} sources, {buf} cells, VBR 300 ms, "
                                f"GR {gr}, {pol}", PROVENANCE_000, paper)
    for buf in SEED000_CONFIGS["sat"]["buffers"]:
        for gr in (0.0, 0.1, 0.5):
            for pol in ("ubr", "epd", "sd"):
                for tcp in ("sack", "reno", "vanilla"):
                    name = f"seed000_sat_5src_buf{buf}_gr{g(gr)}_{pol}_{tcp}"
                    reg[name] = (lambda buf=buf, gr=gr, pol=pol, tcp=tcp: seed000_network(
                        "sat", 5, buf, 0.3, gr, pol, tcp),
                        f"seed 000 Tables 7-9: satellite, 5 {tcp} sources, {buf} cells, VBR 300 ms, GR {gr}, {pol}",
                        PROVENANCE_000, {"table": "7-9"})
    for cfg in ("lan", "wan", "sat"):
        reg[f"seed000_{cfg}_5src_vbr300"] = (lambda cfg=cfg: seed000_network(cfg, 5, None, 0.3, 0.0, "sd", "sack"),
                                             f"seed 000: {cfg.upper()}, 5 SACK sources, smaller buffer, VBR 300 ms, "
                                             "GR 0, Selective Drop", PROVENANCE_000,
                                             {"efficiency": TABLE1[(cfg, SEED000_CONFIGS[cfg]["buffers"][0], 300)][2],
                                              "fairness": TABLE2[(cfg, SEED000_CONFIGS[cfg]["buffers"][0], 300)][2]}
                                             if cfg != "sat" else {"efficiency": 0.74, "fairness": 0.87})
    reg["seed001_testbed"] = (lambda: seed001_network(), "seed 001: 4 Reno TCPs over UBR, 1451 cells, EPD b = 1, "
                              "MTU 1500, 200 ms timer, delayed ACK", PROVENANCE_001, {})
    for b in (0, 1, 2, 3):
        reg[f"seed001_testbed_epd_b{b}"] = (lambda b=b: seed001_network(b=b),
                                            f"seed 001 Sec. 4.2: EPD_th = K - {b} MTU (b = 0: PPD)", PROVENANCE_001, {})
    for mtu in (1500, 4352, 9180):
        for buf in (1088, 1360, 1632, 1904, 2176, 2304):
            reg[f"seed001_2conn_mtu{mtu}_buf{buf}"] = (
                lambda mtu=mtu, buf=buf: seed001_network(connections=2, buffer=buf, mtu=mtu, b=None),
                f"seed 001 Sec. 4.1: 2 TCPs, MTU {mtu}, {buf} cells, plain UBR (PPD)", PROVENANCE_001, {})
    for e in (1, 2, 3, 4):
        reg[f"seed002_threshold_15tcp_exp{e}"] = (
            lambda e=e: seed002_network("threshold", e),
            f"seed 002 Sec. 3: 15 SACK TCPs, thresholds of Table 1 experiment {e}", PROVENANCE_002,
            {"table": "3", "ratio_by_group": TABLE3_002[e], "thresholds": TABLE1_002[e]})
    for e in (1, 2, 3):
        reg[f"seed002_gfr_15tcp_{e}"] = (
            lambda e=e: seed002_network("gfr", e),
            f"seed 002 Sec. 4: 5 GFR VCs x 3 SACK TCPs, thresholds of Table 4 column {e}", PROVENANCE_002,
            {"table": "5", "ratio": TABLE5_002[e], "thresholds": TABLE4_002[e]})
    reg["seed002_gfr_15tcp"] = reg["seed002_gfr_15tcp_1"]
    # seed 003: TCP over ABR with RM cells and ERICA+ (issue 9; presets_abr.py, docs/abr_erica.md)
    from .abr_backbone import abr_presets
    for name, case in abr_presets().items():
        reg[name] = (case.to_network, f"seed 003 ({case.table}): 15 TCPs over ABR, "
                     f"{case.rate_allocation}, buffer {case.source_buffer_cells} cells/VC, "
                     f"VBR d = {case.vbr_duty:g}, p = {case.vbr_period_s * 1e3:g} ms, "
                     f"feedback delay {case.feedback_delay_s * 1e3:g} ms", case.provenance, case.slides)
    return reg


def preset_names() -> list[str]:
    """Every preset name, sorted."""
    return sorted(_registry())


def preset(name: str) -> Preset:
    """The preset called ``name``; ``ValueError`` naming it if there is none."""
    reg = _registry()
    if name not in reg:
        close = [n for n in reg if n.startswith(str(name)[:9])][:5]
        hint = f" (e.g. {', '.join(close)})" if close else " (see `tcpabr presets`)"
        raise ValueError(f"preset={name!r} is invalid: no such preset{hint}")
    build, desc, prov, paper = reg[name]
    return Preset(name=name, network=build(), description=desc, provenance=dict(prov), paper=dict(paper))
