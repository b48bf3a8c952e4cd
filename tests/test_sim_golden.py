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
"""

from __future__ import annotations

import pytest

from tcpabr_model.sim import Scenario, simulate

SIM_GOLDEN = {'effcap-psi1-n1': {'counters': {'acks_sent': 12222,
                                 'cells_dropped': 427,
                                 'cells_sent': 147428,
                                 'cells_served': 147001,
                                 'delivered_segments': 12080,
                                 'delivered_segments_measured': 11294,
                                 'fast_retransmits': 0,
                                 'frames_dropped': 63,
                                 'frames_reassembled': 12222,
                                 'frames_sent': 12286,
                                 'retransmissions': 112,
                                 'segments_sent': 12334,
                                 'timeouts': 8},
                    'efficiency': '0x1.138a3c9016828p-1'},
 'effcap-psi1-n2': {'counters': {'acks_sent': 12392,
                                 'cells_dropped': 305,
                                 'cells_sent': 149291,
                                 'cells_served': 148953,
                                 'delivered_segments': 12347,
                                 'delivered_segments_measured': 11521,
                                 'fast_retransmits': 0,
                                 'frames_dropped': 45,
                                 'frames_reassembled': 12392,
                                 'frames_sent': 12443,
                                 'retransmissions': 90,
                                 'segments_sent': 12611,
                                 'timeouts': 15},
                    'efficiency': '0x1.164bbded139acp-1'},
 'effcap-psi20-n1': {'counters': {'acks_sent': 17926,
                                  'cells_dropped': 1239,
                                  'cells_sent': 217344,
                                  'cells_served': 216105,
                                  'delivered_segments': 17790,
                                  'delivered_segments_measured': 16939,
                                  'fast_retransmits': 0,
                                  'frames_dropped': 185,
                                  'frames_reassembled': 17926,
                                  'frames_sent': 18113,
                                  'retransmissions': 321,
                                  'segments_sent': 18188,
                                  'timeouts': 10},
                     'efficiency': '0x1.62c52dc3b07bep-1'},
 'effcap-psi20-n2': {'counters': {'acks_sent': 15540,
                                  'cells_dropped': 1522,
                                  'cells_sent': 188503,
                                  'cells_served': 186981,
                                  'delivered_segments': 15421,
                                  'delivered_segments_measured': 14621,
                                  'fast_retransmits': 0,
                                  'frames_dropped': 167,
                                  'frames_reassembled': 15540,
                                  'frames_sent': 15711,
                                  'retransmissions': 286,
                                  'segments_sent': 15733,
                                  'timeouts': 21},
                     'efficiency': '0x1.59633ee635b3cp-1'},
 'instcap-psi1-n1': {'counters': {'acks_sent': 11469,
                                  'cells_dropped': 1000,
                                  'cells_sent': 139720,
                                  'cells_served': 138648,
                                  'delivered_segments': 11335,
                                  'delivered_segments_measured': 10595,
                                  'fast_retransmits': 0,
                                  'frames_dropped': 167,
                                  'frames_reassembled': 11469,
                                  'frames_sent': 11644,
                                  'retransmissions': 301,
                                  'segments_sent': 11645,
                                  'timeouts': 23},
                     'efficiency': '0x1.02758fbbc0c16p-1'},
 'instcap-psi1-n2': {'counters': {'acks_sent': 14042,
                                  'cells_dropped': 1098,
                                  'cells_sent': 170538,
                                  'cells_served': 169114,
                                  'delivered_segments': 13940,
                                  'delivered_segments_measured': 12855,
                                  'fast_retransmits': 0,
                                  'frames_dropped': 143,
                                  'frames_reassembled': 14042,
                                  'frames_sent': 14214,
                                  'retransmissions': 240,
                                  'segments_sent': 14254,
                                  'timeouts': 23},
                     'efficiency': '0x1.3684e0569c86cp-1'},
 'instcap-psi20-n1': {'counters': {'acks_sent': 19012,
                                   'cells_dropped': 1372,
                                   'cells_sent': 230828,
                                   'cells_served': 229456,
                                   'delivered_segments': 18817,
                                   'delivered_segments_measured': 18021,
                                   'fast_retransmits': 0,
                                   'frames_dropped': 223,
                                   'frames_reassembled': 19012,
                                   'frames_sent': 19237,
                                   'retransmissions': 418,
                                   'segments_sent': 19313,
                                   'timeouts': 11},
                      'efficiency': '0x1.7965378372f36p-1'},
 'instcap-psi20-n2': {'counters': {'acks_sent': 17294,
                                   'cells_dropped': 1218,
                                   'cells_sent': 209172,
                                   'cells_served': 207954,
                                   'delivered_segments': 17174,
                                   'delivered_segments_measured': 16427,
                                   'fast_retransmits': 0,
                                   'frames_dropped': 137,
                                   'frames_reassembled': 17294,
                                   'frames_sent': 17431,
                                   'retransmissions': 257,
                                   'segments_sent': 17447,
                                   'timeouts': 21},
                      'efficiency': '0x1.84156ebd6473cp-1'},
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
 'seed000_wan_15src_buf12000_gr01_epd_sack': {'counters': {'acks_sent': 45426,
                                                           'cells_dropped': 67752,
                                                           'cells_sent': 629196,
                                                           'delivered_segments': 44847,
                                                           'delivered_segments_measured': 44847,
                                                           'fast_retransmits': 41,
                                                           'frames_corrupted_at_destination': 0,
                                                           'frames_dropped': 5646,
                                                           'frames_reassembled': 45426,
                                                           'frames_sent': 52433,
                                                           'retransmissions': 5734,
                                                           'segments_sent': 52433,
                                                           'timeouts': 36,
                                                           'vbr_cells_dropped': 0,
                                                           'vbr_cells_sent': 806942},
                                              'duration': 2.0,
                                              'efficiency': '0x1.98468bb967243p-1',
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
 'seed002_gfr_15tcp': {'counters': {'acks_sent': 54232,
                                    'cells_dropped': 17641,
                                    'cells_sent': 1265715,
                                    'delivered_segments': 53968,
                                    'delivered_segments_measured': 53968,
                                    'fast_retransmits': 87,
                                    'frames_corrupted_at_destination': 0,
                                    'frames_dropped': 767,
                                    'frames_reassembled': 54232,
                                    'frames_sent': 55034,
                                    'retransmissions': 810,
                                    'segments_sent': 55035,
                                    'timeouts': 21,
                                    'vbr_cells_dropped': 0,
                                    'vbr_cells_sent': 0},
                       'duration': 2.0,
                       'efficiency': '0x1.b12a52a7bc002p-1',
                       'replications': 2}}


def _sim_scenario(key):
    fb, psi, n = key.split("-")
    psi = float(psi[3:])
    if n == "n1":
        return Scenario.from_normalized(delta=40, bmax=10, psi=psi, feedback=fb, duration=60.0, warmup=5.0)
    return Scenario.from_normalized(delta=(48, 72), bmax=18, psi=psi, feedback=fb, duration=60.0, warmup=5.0)


@pytest.mark.parametrize("key", sorted(SIM_GOLDEN))
def test_seed004_scenarios_keep_their_counters(key):
    r = simulate(_sim_scenario(key), replications=2, seed=7)
    assert r.counters == SIM_GOLDEN[key]["counters"]
    assert r.efficiency.mean.hex() == SIM_GOLDEN[key]["efficiency"]


@pytest.mark.parametrize("name", sorted(NET_GOLDEN))
def test_network_presets_keep_their_counters(name):
    from tcpabr_model.sim import simulate_network
    from tcpabr_model.sim.presets.catalogue import preset

    g = NET_GOLDEN[name]
    r = simulate_network(preset(name).network.with_(duration=g["duration"]), replications=g["replications"], seed=7)
    assert r.counters == g["counters"]
    assert r.efficiency.mean.hex() == g["efficiency"]
