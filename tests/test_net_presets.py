"""Scenario library and the CLI entry points of the network simulator."""

import json

import pytest

from tcpabr_model.cli import main
from tcpabr_model.sim import Network, simulate_network
from tcpabr_model.sim import preset, preset_names
from tcpabr_model.sim.presets.ubr_gfr import TABLE1


def test_every_preset_builds_and_states_its_provenance():
    names = preset_names()
    assert len(names) > 300
    for n in ("seed000_wan_5src_vbr300", "seed000_lan_5src_vbr300", "seed000_sat_5src_vbr300",
              "seed001_testbed", "seed002_gfr_15tcp", "seed002_threshold_15tcp_exp4"):
        assert n in names
    for n in names[::17] + ["seed001_testbed", "seed002_gfr_15tcp"]:
        p = preset(n)
        assert isinstance(p.network, Network)
        assert p.provenance and all(v.startswith(("stated", "CHOICE")) for v in p.provenance.values())


def test_seed000_parameters_as_stated():
    net = preset("seed000_wan_5src_buf36000_vbr100_epd").network
    assert net.link_rate_bps == 155.52e6 and net.payload_bytes == 512
    assert net.cells_per_frame == 12 and net.payload_fraction == pytest.approx(0.805, abs=5e-4)
    assert net.round_trip(0) == pytest.approx(0.030)
    assert net.tcp.wmax == 600000 // 512 and net.tcp.variant == "sack" and not net.tcp.delayed_ack
    assert net.ports[0].ubr_buffer == 36000 and net.ports[0].ubr_policy.kind == "epd"
    assert net.vbr[0].on == net.vbr[0].off == 0.1 and net.duration == 20.0
    assert preset("seed000_wan_5src_buf36000_vbr100_epd").paper["efficiency"] == TABLE1[("wan", 36000, 100)][1]
    sat = preset("seed000_sat_5src_buf600000_gr05_sd_reno").network
    assert sat.round_trip(0) == pytest.approx(0.55002) and sat.payload_bytes == 9180
    assert sat.tcp.wmax == 8704000 // 9180 and sat.ports[0].gr == 0.5 and sat.duration == 40.0
    lan = preset("seed000_lan_15src_buf3000_gr01_ubr_vanilla").network
    assert len(lan.vcs) == 15 and lan.tcp.variant == "timeout-only" and lan.ports[0].ubr_policy.kind == "tail"


def test_seed002_thresholds_and_merging():
    g = preset("seed002_gfr_15tcp_2").network
    assert [v.connections for v in g.vcs] == [3] * 5
    assert [v.threshold for v in g.vcs] == [305, 611, 917, 1223, 1528]
    assert g.ports[0].ubr_policy.kind == "gfr" and g.ports[0].ubr_policy.z == 1.5
    t = preset("seed002_threshold_15tcp_exp1").network
    assert sum(v.threshold for v in t.vcs) == 3 * (305 + 611 + 917 + 1223 + 1528)


def test_unknown_preset_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="preset='seed999'"):
        preset("seed999")


def test_cli_unknown_preset_one_line_exit_2(capsys):
    assert main(["simulate", "--preset", "seed999_x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "seed999_x" in err and "Traceback" not in err


def test_cli_presets_list_and_show(capsys):
    assert main(["presets", "--filter", "seed002_gfr"]) == 0
    out = capsys.readouterr().out.split()
    assert out == ["seed002_gfr_15tcp", "seed002_gfr_15tcp_1", "seed002_gfr_15tcp_2", "seed002_gfr_15tcp_3"]
    assert main(["presets", "--show", "seed001_testbed", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "EPD" in d["provenance"] and d["network"]["ports"][0]["ubr_buffer"] == 1451
    assert main(["simulate", "--list-presets"]) == 0
    assert "seed000_wan_5src_vbr300" in capsys.readouterr().out


def test_cli_simulate_preset_json(capsys):
    assert main(["simulate", "--preset", "seed002_gfr_15tcp", "--duration", "0.05", "--replications", "2",
                 "--seed", "4", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["preset"]["name"] == "seed002_gfr_15tcp"
    assert d["replications"] == 2 and len(d["share_ratio"]) == 5
    assert d["network"]["duration"] == 0.05


def test_replications_differ_through_start_jitter_and_seed_reproduces():
    net = preset("seed000_lan_5src_vbr300").network.with_(duration=0.4)
    a = simulate_network(net, replications=2, seed=5)
    b = simulate_network(net, replications=2, seed=5)
    assert a.efficiency == b.efficiency
    assert a.counters == b.counters
    assert a.goodput_bps[0].half_width > 0
