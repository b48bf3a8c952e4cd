"""Golden counters: fixed-seed counters of the seed 004 scenarios and five network presets.

Captured on the tree before the one-simulator refactoring (issue 14, "Invariants").  They must
stay bit-identical; a change made on purpose (issue 14 items 4 and 5) edits the value here and
records the old and new numbers in ``docs/simulator.md`` ("Golden counters").  Efficiencies
are stored as ``float.hex`` so that the comparison is exact.

Changed on purpose:

* issue 14 item 4 (one time unit: TCP alone carries one IP packet per time unit, the same
  pipe as over ATM): the four ``none-*`` scenarios.  delivered_segments / efficiency before
  -> after: none-psi1-n1 10484 / 0.4774 -> 10125 / 0.5429; none-psi1-n2 12432 / 0.5608 ->
  11648 / 0.6210; none-psi20-n1 14761 / 0.5836 -> 14624 / 0.6776; none-psi20-n2 15672 /
  0.7015 -> 14096 / 0.7428 (full counters in ``docs/simulator.md``, "Golden counters").
* issue 14 item 5 (no replications of a network without randomness): the two seed 003
  presets ran 2 identical replications; they now run one, so every counter is half the old
  total (e.g. abr_backbone_novbr_buf1000 delivered_segments 11216 -> 5608) and the
  efficiency is unchanged.
* issue 25 item 2 (the window cap limits the segments in the network, not the sequence space
  of a fast recovery): ``seed001_testbed`` (Reno, wmax 35).  Its recoveries may now send new
  data up to 2 wmax past snd_una while the inflated window allows; delivered_segments 8447 ->
  8455, fast_retransmits 42 -> 43, timeouts 8 -> 7, retransmissions 98 -> 94, efficiency
  0.76528 -> 0.76601.  The seed 004 scenarios (timeout-only) and the other presets are
  bit-identical.
* issue 25 item 4 (SACK recovery is RFC 6675 pipe + RFC 6937 PRR-SSRB, as Linux and ns-3
  run it): the two SACK presets.  ``seed000_wan_15src_buf12000_gr01_epd_sack`` delivered
  40831 -> 44847, retransmissions 4317 -> 5734, timeouts 34 -> 36, efficiency 0.72599 ->
  0.79741; ``seed002_gfr_15tcp`` delivered 55139 -> 53968, fast retransmits 103 -> 87,
  timeouts 18 -> 21, efficiency 0.86438 -> 0.84603.
* issue 25 item 2 / issue 23 (RFC 5681 Sec. 3.1, and seed 004 Sec. III-A item 7: "the threshold
  window is set to half the maximum congestion window achieved after the loss"): a timeout that
  fires again before ``snd_una`` has moved keeps ssthresh instead of halving the window of 1 to
  2.  Every scenario with a repeated timeout moved: the eight seed 004 scenarios except none-*
  (e.g. instcap-psi20-n1 delivered 18817 -> 19199, efficiency 0.73710 -> 0.75280; effcap-psi20-n1
  17790 -> 18632, 0.69291 -> 0.72735), ``seed000_wan_15src_buf12000_gr01_epd_sack`` (44847 ->
  46411, 0.79741 -> 0.82521) and ``seed002_gfr_15tcp`` (53968 -> 54030, 0.84603 -> 0.84700);
  the full list is in ``docs/simulator.md`` ("Golden counters").
"""

from __future__ import annotations

import pytest

from tcpabr_model.sim import Scenario, simulate

SIM_GOLDEN = {'effcap-psi1-n1': {'counters': {'acks_sent': 12689,
                                 'cells_dropped': 422,
                                 'cells_sent': 152998,
                                 'cells_served': 152575,
                                 'delivered_segments': 12499,
                                 'delivered_segments_measured': 11713,
                                 'fast_retransmits': 0,
                                 'frames_dropped': 60,
                                 'frames_reassembled': 12689,
                                 'frames_sent': 12751,
                                 'retransmissions': 145,
                                 'segments_sent': 12803,
                                 'timeouts': 8},
                    'efficiency': '0x1.1dc0b8b07656bp-1'},
 'effcap-psi1-n2': {'counters': {'acks_sent': 12783,
                                 'cells_dropped': 339,
                                 'cells_sent': 154047,
                                 'cells_served': 153677,
                                 'delivered_segments': 12700,
                                 'delivered_segments_measured': 11874,
                                 'fast_retransmits': 0,
                                 'frames_dropped': 51,
                                 'frames_reassembled': 12783,
                                 'frames_sent': 12840,
                                 'retransmissions': 134,
                                 'segments_sent': 13069,
                                 'timeouts': 18},
                    'efficiency': '0x1.1ede8074857fep-1'},
 'effcap-psi20-n1': {'counters': {'acks_sent': 18851,
                                  'cells_dropped': 1777,
                                  'cells_sent': 229574,
                                  'cells_served': 227797,
                                  'delivered_segments': 18632,
                                  'delivered_segments_measured': 17781,
                                  'fast_retransmits': 0,
                                  'frames_dropped': 279,
                                  'frames_reassembled': 18851,
                                  'frames_sent': 19132,
                                  'retransmissions': 498,
                                  'segments_sent': 19209,
                                  'timeouts': 10},
                     'efficiency': '0x1.7467b5a4d44c8p-1'},
 'effcap-psi20-n2': {'counters': {'acks_sent': 16453,
                                  'cells_dropped': 1752,
                                  'cells_sent': 199848,
                                  'cells_served': 198096,
                                  'delivered_segments': 16208,
                                  'delivered_segments_measured': 15408,
                                  'fast_retransmits': 0,
                                  'frames_dropped': 200,
                                  'frames_reassembled': 16453,
                                  'frames_sent': 16656,
                                  'retransmissions': 445,
                                  'segments_sent': 16703,
                                  'timeouts': 23},
                     'efficiency': '0x1.6bfc3e40bd2e8p-1'},
 'instcap-psi1-n1': {'counters': {'acks_sent': 11402,
                                  'cells_dropped': 1081,
                                  'cells_sent': 139072,
                                  'cells_served': 137919,
                                  'delivered_segments': 11229,
                                  'delivered_segments_measured': 10487,
                                  'fast_retransmits': 0,
                                  'frames_dropped': 180,
                                  'frames_reassembled': 11402,
                                  'frames_sent': 11590,
                                  'retransmissions': 353,
                                  'segments_sent': 11591,
                                  'timeouts': 25},
                     'efficiency': '0x1.ff9c0a15bdbc7p-2'},
 'instcap-psi1-n2': {'counters': {'acks_sent': 14301,
                                  'cells_dropped': 1283,
                                  'cells_sent': 174018,
                                  'cells_served': 172367,
                                  'delivered_segments': 14123,
                                  'delivered_segments_measured': 13038,
                                  'fast_retransmits': 0,
                                  'frames_dropped': 169,
                                  'frames_reassembled': 14301,
                                  'frames_sent': 14503,
                                  'retransmissions': 347,
                                  'segments_sent': 14614,
                                  'timeouts': 24},
                     'efficiency': '0x1.3ae8da5924ef0p-1'},
 'instcap-psi20-n1': {'counters': {'acks_sent': 19427,
                                   'cells_dropped': 1404,
                                   'cells_sent': 235873,
                                   'cells_served': 234469,
                                   'delivered_segments': 19199,
                                   'delivered_segments_measured': 18403,
                                   'fast_retransmits': 0,
                                   'frames_dropped': 228,
                                   'frames_reassembled': 19427,
                                   'frames_sent': 19657,
                                   'retransmissions': 456,
                                   'segments_sent': 19732,
                                   'timeouts': 11},
                      'efficiency': '0x1.816edc6712713p-1'},
 'instcap-psi20-n2': {'counters': {'acks_sent': 17838,
                                   'cells_dropped': 1222,
                                   'cells_sent': 215712,
                                   'cells_served': 214490,
                                   'delivered_segments': 17692,
                                   'delivered_segments_measured': 16945,
                                   'fast_retransmits': 0,
                                   'frames_dropped': 136,
                                   'frames_reassembled': 17838,
                                   'frames_sent': 17978,
                                   'retransmissions': 282,
                                   'segments_sent': 18051,
                                   'timeouts': 22},
                      'efficiency': '0x1.904fb1490b3edp-1'},
 'none-psi1-n1': {'counters': {'acks_sent': 10210,
                               'cells_dropped': 87,
                               'cells_sent': 10298,
                               'cells_served': 10210,
                               'delivered_segments': 10125,
                               'delivered_segments_measured': 9677,
                               'fast_retransmits': 0,
                               'frames_dropped': 87,
                               'frames_reassembled': 10210,
                               'frames_sent': 10298,
                               'retransmissions': 172,
                               'segments_sent': 10298,
                               'timeouts': 26},
                  'efficiency': '0x1.15f8b0eab4429p-1'},
 'none-psi1-n2': {'counters': {'acks_sent': 11834,
                               'cells_dropped': 201,
                               'cells_sent': 12062,
                               'cells_served': 11834,
                               'delivered_segments': 11648,
                               'delivered_segments_measured': 11177,
                               'fast_retransmits': 0,
                               'frames_dropped': 201,
                               'frames_reassembled': 11834,
                               'frames_sent': 12062,
                               'retransmissions': 373,
                               'segments_sent': 12062,
                               'timeouts': 42},
                  'efficiency': '0x1.3df9997fea918p-1'},
 'none-psi20-n1': {'counters': {'acks_sent': 14760,
                                'cells_dropped': 117,
                                'cells_sent': 14885,
                                'cells_served': 14760,
                                'delivered_segments': 14624,
                                'delivered_segments_measured': 14067,
                                'fast_retransmits': 0,
                                'frames_dropped': 117,
                                'frames_reassembled': 14760,
                                'frames_sent': 14885,
                                'retransmissions': 253,
                                'segments_sent': 14886,
                                'timeouts': 21},
                   'efficiency': '0x1.5ae837d728164p-1'},
 'none-psi20-n2': {'counters': {'acks_sent': 14278,
                                'cells_dropped': 189,
                                'cells_sent': 14472,
                                'cells_served': 14278,
                                'delivered_segments': 14096,
                                'delivered_segments_measured': 13668,
                                'fast_retransmits': 0,
                                'frames_dropped': 189,
                                'frames_reassembled': 14278,
                                'frames_sent': 14472,
                                'retransmissions': 353,
                                'segments_sent': 14472,
                                'timeouts': 37},
                   'efficiency': '0x1.7c49be4e2dcd9p-1'}}

NET_GOLDEN = {'abr_backbone_novbr_buf1000': {'counters': {'acks_sent': 7759,
                                             'cells_dropped': 0,
                                             'cells_sent': 93108,
                                             'delivered_segments': 5608,
                                             'delivered_segments_measured': 5608,
                                             'fast_retransmits': 15,
                                             'frames_corrupted_at_destination': 0,
                                             'frames_dropped': 0,
                                             'frames_reassembled': 7759,
                                             'frames_sent': 7759,
                                             'retransmissions': 15,
                                             'segments_sent': 7759,
                                             'timeouts': 0,
                                             'vbr_cells_dropped': 0,
                                             'vbr_cells_sent': 0},
                                'duration': 0.5,
                                'efficiency': '0x1.77c0145e6816ap-2',
                                'replications': 1},
 'abr_vbr_d080_p10ms': {'counters': {'acks_sent': 4167,
                                     'cells_dropped': 0,
                                     'cells_sent': 62811,
                                     'delivered_segments': 4167,
                                     'delivered_segments_measured': 4167,
                                     'fast_retransmits': 0,
                                     'frames_corrupted_at_destination': 0,
                                     'frames_dropped': 0,
                                     'frames_reassembled': 4167,
                                     'frames_sent': 5242,
                                     'retransmissions': 0,
                                     'segments_sent': 7709,
                                     'timeouts': 0,
                                     'vbr_cells_dropped': 0,
                                     'vbr_cells_sent': 117350},
                        'duration': 0.5,
                        'efficiency': '0x1.83a3bfc7efb07p-1',
                        'replications': 1},
 'seed000_wan_15src_buf12000_gr01_epd_sack': {'counters': {'acks_sent': 47046,
                                                           'cells_dropped': 68076,
                                                           'cells_sent': 654122,
                                                           'delivered_segments': 46411,
                                                           'delivered_segments_measured': 46411,
                                                           'fast_retransmits': 41,
                                                           'frames_corrupted_at_destination': 0,
                                                           'frames_dropped': 5673,
                                                           'frames_reassembled': 47046,
                                                           'frames_sent': 54511,
                                                           'retransmissions': 6281,
                                                           'segments_sent': 54511,
                                                           'timeouts': 36,
                                                           'vbr_cells_dropped': 0,
                                                           'vbr_cells_sent': 806942},
                                              'duration': 2.0,
                                              'efficiency': '0x1.a6817e0296a48p-1',
                                              'replications': 2},
 'seed001_testbed': {'counters': {'acks_sent': 4523,
                                  'cells_dropped': 2144,
                                  'cells_sent': 276155,
                                  'delivered_segments': 8455,
                                  'delivered_segments_measured': 8455,
                                  'fast_retransmits': 43,
                                  'frames_corrupted_at_destination': 0,
                                  'frames_dropped': 67,
                                  'frames_reassembled': 8490,
                                  'frames_sent': 8630,
                                  'retransmissions': 94,
                                  'segments_sent': 8631,
                                  'timeouts': 7,
                                  'vbr_cells_dropped': 0,
                                  'vbr_cells_sent': 0},
                     'duration': 2.0,
                     'efficiency': '0x1.88324265871d3p-1',
                     'replications': 2},
 'seed002_gfr_15tcp': {'counters': {'acks_sent': 54208,
                                    'cells_dropped': 17733,
                                    'cells_sent': 1265455,
                                    'delivered_segments': 54030,
                                    'delivered_segments_measured': 54030,
                                    'fast_retransmits': 90,
                                    'frames_corrupted_at_destination': 0,
                                    'frames_dropped': 771,
                                    'frames_reassembled': 54208,
                                    'frames_sent': 55021,
                                    'retransmissions': 812,
                                    'segments_sent': 55022,
                                    'timeouts': 22,
                                    'vbr_cells_dropped': 0,
                                    'vbr_cells_sent': 0},
                       'duration': 2.0,
                       'efficiency': '0x1.b1a9b785adbadp-1',
                       'replications': 2}}


def _recorded(counters: dict, golden: dict) -> dict:
    """The counters a golden entry recorded (counters added since, such as the timeout kinds,
    are diagnostics of the same run and are checked in tests/test_sim_timeout_kinds.py)."""
    return {k: counters[k] for k in golden}


def _sim_scenario(key):
    fb, psi, n = key.split("-")
    psi = float(psi[3:])
    if n == "n1":
        return Scenario.from_normalized(delta=40, bmax=10, psi=psi, feedback=fb, duration=60.0, warmup=5.0)
    return Scenario.from_normalized(delta=(48, 72), bmax=18, psi=psi, feedback=fb, duration=60.0, warmup=5.0)


@pytest.mark.parametrize("key", sorted(SIM_GOLDEN))
def test_seed004_scenarios_keep_their_counters(key):
    r = simulate(_sim_scenario(key), replications=2, seed=7)
    assert _recorded(r.counters, SIM_GOLDEN[key]["counters"]) == SIM_GOLDEN[key]["counters"]
    assert r.efficiency.mean.hex() == SIM_GOLDEN[key]["efficiency"]


@pytest.mark.parametrize("name", sorted(NET_GOLDEN))
def test_network_presets_keep_their_counters(name):
    from tcpabr_model.sim import simulate_network
    from tcpabr_model.sim.presets.catalogue import preset

    g = NET_GOLDEN[name]
    r = simulate_network(preset(name).network.with_(duration=g["duration"]), replications=g["replications"], seed=7)
    assert _recorded(r.counters, g["counters"]) == g["counters"]
    assert r.efficiency.mean.hex() == g["efficiency"]
