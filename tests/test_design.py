"""The feedback designer (issue 26 item 3, first part): candidates, the Pareto front, the
simulator's evaluation and ``tcpabr design``."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tcpabr_model.cli as cli
from tcpabr_model.design import Candidate, candidate_grid, design, pareto_front
from tcpabr_model.sim import Scenario, simulate


def test_pareto_front_by_hand():
    th = [0.5, 0.6, 0.55, 0.6, np.nan, 0.4]
    p95 = [10.0, 20.0, 30.0, 15.0, 1.0, 10.0]
    # (0.6, 20) is dominated by (0.6, 15); (0.55, 30) by both; (0.4, 10) by (0.5, 10); NaN never
    np.testing.assert_array_equal(pareto_front(th, p95), [True, False, False, True, False, False])
    with pytest.raises(ValueError, match="throughput and delay are invalid"):
        pareto_front([1.0, 2.0], [1.0])


@pytest.mark.parametrize("kw, msg", [
    ({"feedback": "instcap", "m": 3}, "M and N are EFFCAP's"),
    ({"feedback": "effcap", "m": 0}, "m=0 is invalid"),
    ({"feedback": "instcap", "utilisation": 0.0}, "utilisation=0.0 is invalid"),
    ({"feedback": "effcap", "mcr": 1.5}, "mcr=1.5 is invalid"),
    ({"feedback": "none", "mcr": 0.1}, "takes no mcr"),
    ({"feedback": "erica"}, "feedback='erica' is invalid"),
])
def test_candidate_refuses_bad_values(kw, msg):
    with pytest.raises(ValueError, match=msg):
        Candidate(**kw)


def test_grid_and_scenarios():
    g = candidate_grid(m=(1, 2), n=(8,), utilisation=(0.9, 1.0))
    labels = [c.label for c in g]
    assert labels == ["TCP alone", "INSTCAP", "EFFCAP paper rule", "EFFCAP M=1 N=8", "EFFCAP M=2 N=8",
                      "INSTCAP u=0.9"]
    base = Scenario(rtt=(0.1, 0.2), duration=10.0)
    sc = Candidate("instcap", utilisation=0.9).scenario(base)
    assert sc.feedback == "instcap" and sc.share == (0.45, 0.45)
    e = Candidate("effcap", m=3, n=12, interval=0.05, mcr=0.1).scenario(base)
    assert e.m == (3, 3) and e.n == (12, 12) and e.interval == 0.05 and e.mcr == (0.1, 0.1)
    rule = Candidate("effcap").scenario(base)
    ref = Scenario(rtt=(0.1, 0.2), duration=10.0, feedback="effcap")
    assert rule.m == ref.m and rule.n == ref.n
    assert Candidate("none").scenario(e).feedback == "none"


def test_design_evaluates_with_the_simulator():
    base = Scenario.from_normalized(delta=40, bmax=10, psi=1, duration_units=2000)
    cands = (Candidate("none"), Candidate("instcap"), Candidate("effcap", m=1, n=4))
    d = design(base, cands, replications=2, seed=3)
    assert d.evaluated_with == "simulator" and len(d.points) == 3
    # the numbers are simulate's, same seed for every candidate
    r = simulate(cands[2].scenario(base), replications=2, seed=3)
    assert d.points[2].p95_delay == r.delay.total.p95
    assert d.points[2].throughput == r.efficiency_wire
    th = [p.throughput.mean for p in d.points]
    p95 = [p.p95_delay.mean for p in d.points]
    np.testing.assert_array_equal([p.on_front for p in d.points], pareto_front(th, p95))
    assert d.best.throughput.mean == max(th)
    assert all(p.on_front for p in d.front)
    # a limit below every p95 leaves no feasible design
    tight = design(base, cands[:2], replications=2, seed=3, max_p95_delay=1e-9)
    assert tight.best is None and not any(p.feasible for p in tight.points)
    with pytest.raises(ValueError, match="max_p95_delay=0 is invalid"):
        design(base, cands, max_p95_delay=0)


@pytest.fixture
def main(monkeypatch):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("tcpabr_model.design.cli",))
    return cli.main


def test_cli_json(main, capsys):
    rc = main(["design", "--delta", "40", "--bmax", "10", "--psi", "1", "--duration", "100", "--m", "2",
               "--n", "8", "--utilisation", "0.9", "--replications", "2", "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert [p["candidate"]["label"] for p in d["points"]] == ["TCP alone", "INSTCAP", "EFFCAP paper rule",
                                                              "EFFCAP M=2 N=8", "INSTCAP u=0.9"]
    assert d["evaluated_with"] == "simulator" and d["best"] is not None and d["front"]
    assert all(p["p95_delay_s"]["n"] == 2 for p in d["points"])


@pytest.mark.parametrize("argv, msg", [
    (["--preset", "x"], "--preset is not used by tcpabr design"),
    (["--feedback", "effcap"], "--feedback is not used by tcpabr design"),
    (["--utilisation", "0"], "utilisation=0.0 is invalid"),
])
def test_cli_refusals_exit_2(main, capsys, argv, msg):
    assert main(["design", "--duration", "5", *argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1


# ---- issue 26 items 3-4, second part: analysis beside, held out, robust over psi ----------

from tcpabr_model.capacity import read_trace  # noqa: E402
from tcpabr_model.design.analysis import analysable, analysis_beside  # noqa: E402
from tcpabr_model.design.robust import best_within, design_held_out, design_over_psi  # noqa: E402
from tcpabr_model.markov import Scenario as MScenario, analyze  # noqa: E402
from tcpabr_model.trace_study import trace_halves  # noqa: E402

DATA = __import__("pathlib").Path(__file__).parent / "data"


def test_analysis_beside_is_the_markov_analysis_where_it_has_one():
    base = Scenario.from_normalized(delta=40, bmax=10, psi=10, duration_units=1000)
    a = analysis_beside(base, Candidate("instcap"))
    r = analyze(MScenario(delta=40, bmax=10, psi=10, feedback="instcap", wmax=base.tcp.wmax))
    assert a["throughput"] == pytest.approx(r.prediction, rel=1e-12)
    assert a["mean_delay_s"] == pytest.approx((r.mean_queueing_delay + r.mean_source_delay) * base.time_unit)
    assert a["holds"] and "psi = 10 > 5" in a["validity"] and "no p95" in a["delay_note"]
    low = analysis_beside(base.with_(tau=base.tau / 10), Candidate("none"))
    assert not low["holds"]
    for c in (Candidate("effcap", m=1, n=4), Candidate("instcap", utilisation=0.9), Candidate("instcap", mcr=0.1)):
        assert analysis_beside(base, c) is None and analysable(base, c)
    d = design(base, (Candidate("none"), Candidate("effcap", m=1, n=4)), replications=2, seed=1)
    assert [p.evaluated_by for p in d.points] == ["simulator; analysis beside (throughput, mean delay)",
                                                  "simulator"]
    # the front and the best are the simulator's: the analysis changes nothing of them
    bare = design(base, (Candidate("none"), Candidate("effcap", m=1, n=4)), replications=2, seed=1, analysis=False)
    assert [p.on_front for p in d.points] == [p.on_front for p in bare.points]
    assert bare.points[0].analysis is None and d.points[0].throughput == bare.points[0].throughput


def test_effcap_measured_every_round_trip_has_the_analysis():
    # docs/model.md sec. 20: EFFCAP sampled once per round trip is the history chain; other intervals are not
    base = Scenario.from_normalized(delta=40, bmax=10, psi=2, duration_units=1000)
    rtt = base.rtt[0]
    assert "every 0.03 s" in analysable(base, Candidate("effcap", m=1, n=8))
    c = Candidate("effcap", m=1, n=8, interval=rtt)
    a = analysis_beside(base, c, simulated=False)
    r = analyze(MScenario(delta=40, bmax=10, psi=2, feedback="effcap", effcap_m=1, effcap_n=8, wmax=base.tcp.wmax))
    assert a["throughput"] == pytest.approx(r.prediction, rel=1e-12) and a["holds"]
    assert "N = 8 >= 8" in a["validity"]
    # beside a simulation with the testbed's feedback delay of one round trip, the rate is two round trips old
    late = analysis_beside(base, c)
    assert not late["holds"] and "simulated EFFCAP measures over s = 0.2 s" in late["validity"]
    # the paper's rule at s = RTT: the simulator's own M : Delta, N : 8 Delta (1 and 7)
    rule = analysis_beside(base, Candidate("effcap", interval=rtt), simulated=False)
    r7 = analyze(MScenario(delta=40, bmax=10, psi=2, feedback="effcap", effcap_m=1, effcap_n=7, wmax=base.tcp.wmax))
    assert rule["throughput"] == pytest.approx(r7.prediction, rel=1e-12) and not rule["holds"]
    for cc in (Candidate("effcap", m=1, n=8, interval=rtt, mcr=0.1),
               Candidate("effcap", m=1, n=8, interval=rtt / 2)):
        assert analysable(base, cc)


def test_held_out_design_reports_on_the_other_half():
    trace = read_trace(str(DATA / "markov3_outage.down"))
    base = Scenario(feedback="instcap", rtt=0.05, buffer_packets=10, payload_bytes=1460, capacity=trace,
                    duration=40.0)
    cands = (Candidate("effcap", m=1, n=4),)
    h = design_held_out(base, cands, replications=2, seed=2, duration=8.0, analysis=False)
    halves = trace_halves(trace)
    assert [(r.design_half, r.test_half) for r in h.rounds] == [(halves[0].name, halves[1].name),
                                                                (halves[1].name, halves[0].name)]
    r0 = h.rounds[0]
    labels = [p.candidate.label for p in r0.designed.points]
    assert labels == ["TCP alone", "INSTCAP", "EFFCAP M=1 N=4"]
    inst = r0.designed.points[1]
    assert r0.limit == inst.p95_delay.mean and r0.limit_source.startswith("INSTCAP's p95")
    assert r0.chosen == best_within(r0.designed.points, r0.limit).candidate
    assert all(p.feasible == (p.p95_delay.mean <= r0.limit) for p in r0.designed.points)
    # the held-out numbers are a replay of the other half, with the test seed
    other = base.with_(capacity=halves[1], duration=8.0, warmup=0.8)
    r = simulate(Candidate("instcap").scenario(other), replications=2, seed=3)
    assert r0.on_test(Candidate("instcap")).throughput == r.efficiency_wire
    assert "reported on the OTHER half, held out" in "\n".join(h.lines())
    from tcpabr_model.plot import plot_design

    fig = plot_design(h)        # one panel per design half, the held-out replay hollow on it
    assert len(fig.axes) == 2 and fig.axes[0].get_title().startswith(f"designed on {halves[0].name}")
    t = r0.effcap_vs_instcap()
    assert t is None or t["met"] == (t["throughput_rel"] >= -0.05 and t["p95_diff_s"] <= t["instcap_p95_half_width_s"])
    with pytest.raises(ValueError, match="its capacity must be a trace"):
        design_held_out(Scenario(duration=5.0), cands)


def test_design_over_psi_is_max_min():
    psis = (1.0, 20.0)
    bases = [Scenario.from_normalized(delta=40, bmax=10, psi=x, duration_units=2000) for x in psis]
    cands = (Candidate("none"), Candidate("instcap"), Candidate("effcap", m=1, n=4))
    res = design_over_psi(bases, psis, cands, replications=2, seed=1, analysis=False)
    worst = [min(d.points[i].throughput.mean for d in res.designs) for i in range(3)]
    assert res.robust == cands[int(np.argmax(worst))] and res.robust_min_throughput == max(worst)
    lim = min(max(d.points[i].p95_delay.mean for d in res.designs) for i in range(3))
    tight = design_over_psi(bases, psis, cands, replications=2, seed=1, analysis=False, max_p95_delay=lim)
    ok = [i for i in range(3) if all(d.points[i].p95_delay.mean <= lim for d in tight.designs)]
    assert tight.robust == cands[max(ok, key=lambda i: worst[i])]
    assert "robust design:" in tight.lines()[-1]


def test_cli_psi_list_and_trace_refusals(main, capsys):
    rc = main(["design", "--delta", "40", "--bmax", "10", "--psi", "1,20", "--duration", "50", "--m", "1",
               "--n", "4", "--utilisation", "0.9", "--replications", "2", "--no-analysis", "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert d["psi"] == [1.0, 20.0] and len(d["per_psi"]) == 2 and d["robust"] is not None
    for argv, msg in ((["--whole-trace"], "--whole-trace is invalid without --capacity-trace"),
                      (["--capacity-trace", str(DATA / "constant_1000pps.down"), "--rtt", "0.05", "--psi", "1,2"],
                       "--psi 1,2 is invalid with a trace"),
                      (["--quick", "--m", "3"], "--m is invalid with --quick")):
        assert main(["design", *argv]) == 2
        err = capsys.readouterr().err
        assert msg in err and len(err.strip().splitlines()) == 1


def test_plot_design_json(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("tcpabr_model.design.cli", "tcpabr_model.plot.cli"))
    assert cli.main(["design", "--delta", "40", "--bmax", "10", "--psi", "1,20", "--duration", "50", "--m", "1",
                     "--n", "4", "--utilisation", "0.9", "--replications", "2", "--no-analysis", "--json"]) == 0
    src = tmp_path / "d.json"
    src.write_text(capsys.readouterr().out)
    out = tmp_path / "front.png"
    assert cli.main(["plot", str(src), "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000 and "throughput against p95 delay" in capsys.readouterr().out
    from tcpabr_model.plot import plot_design

    fig = plot_design(json.loads(src.read_text()))
    assert len(fig.axes) == 2 and "psi = 20" in fig.axes[1].get_title()
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": 1}')
    for argv, msg in (([str(bad)], "not the output of tcpabr design --json"),
                      ([str(src), "--x", "psi"], "--x is invalid with a design result"),
                      ([str(tmp_path / "t.csv")], "the following arguments are required: --x")):
        assert cli.main(["plot", *argv]) == 2
        err = capsys.readouterr().err
        assert msg in err and len(err.strip().splitlines()) == 1


def test_cli_capacity_model_and_offset(main, capsys, tmp_path):
    from tcpabr_model.capacity import from_arrays, save_model

    path = tmp_path / "m.json"
    save_model(from_arrays([200.0, 600.0], [[0.9, 0.1], [0.1, 0.9]], epoch=0.1, time_unit=1.0, packet_bytes=1500),
               str(path))
    # TCP alone and the ABR candidates have different high rates on a physical capacity
    assert main(["design", "--capacity", str(path), "--rtt", "0.05", "--bmax", "10", "--duration", "20",
                 "--m", "1", "--n", "4", "--utilisation", "0.9", "--replications", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [p["candidate"]["label"] for p in d["points"]][:2] == ["TCP alone", "INSTCAP"]
    # the model steps every 2 round trips: the engine cannot take it, and the designer says why
    assert all(p["evaluated_by"] == "simulator" for p in d["points"])
    assert all("is not the round trip (0.05 s) over an integer" in p["analysis"]["error"] for p in d["points"][:2])
    assert all(p["analysis"] is None for p in d["points"][2:])
    assert main(["design", "--capacity-trace", str(DATA / "markov3_outage.down"), "--rtt", "0.05",
                 "--capacity-offset", "3"]) == 2
    assert "--capacity-offset is invalid with a held-out design" in capsys.readouterr().err


def test_analysis_beside_on_a_trace_is_analyze_links():
    from tcpabr_model.trace_study import analyze_link, fit_link

    half = trace_halves(read_trace(str(DATA / "markov3_outage.down")))[1]
    base = Scenario(feedback="instcap", rtt=0.05, buffer_packets=10, payload_bytes=1460, capacity=half,
                    duration=20.0)
    a = analysis_beside(base, Candidate("instcap"))
    la = analyze_link(fit_link(half, 0.05), 10, "instcap", wmax=base.tcp.wmax)
    assert a["throughput"] == pytest.approx(la.prediction, rel=1e-9)
    assert a["band"] == pytest.approx([la.conservative, la.optimistic], rel=1e-9)
    # 11 % of its epochs serve nothing: the fitted chain strains the timer's assumption
    assert not a["holds"] and "serve nothing" in a["validity"] and a["mean_delay_s"] > 0


def test_cli_analysis_only(main, capsys):
    argv = ["design", "--delta", "40", "--bmax", "10", "--psi", "10", "--analysis-only"]
    assert main(argv + ["--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["evaluated_with"] == "analysis" and [r["candidate"] for r in d["points"]] == ["TCP alone", "INSTCAP"]
    r = analyze(MScenario(delta=40, bmax=10, psi=10, feedback="none"))
    assert d["points"][0]["throughput"] == pytest.approx(r.prediction, rel=1e-12)
    assert all("p95" not in k for row in d["points"] for k in row)
    # the default grid's candidates the analysis cannot take are listed, each with its reason
    skipped = {x["candidate"]: x["reason"] for x in d["not_analysed"]}
    assert set(skipped) == {"EFFCAP paper rule", "EFFCAP M=1 N=4", "EFFCAP M=1 N=16", "EFFCAP M=4 N=4",
                            "EFFCAP M=4 N=16", "INSTCAP u=0.9", "INSTCAP u=0.95"}
    # the text gives the same reasons as the JSON (it listed the names only)
    assert main(argv) == 0
    text = capsys.readouterr().out
    for name, why in skipped.items():
        assert any(name in line and line.endswith(why) for line in text.splitlines()), (name, text)
    assert main(["design", "--psi", "1,10", "--analysis-only"]) == 2
    assert "--analysis-only is invalid" in capsys.readouterr().err


@pytest.mark.parametrize("args, msg", [
    # no candidate from --m 3 can be analysed at the default interval: refused, as --max-p95-delay is
    (["--m", "3"], "--m 3 is not evaluated with --analysis-only: the analysis' EFFCAP samples once per round trip "
                   "(s = 0.2 s), this candidate every 0.03 s (docs/model.md sec. 20): add --interval 0.2 (the round "
                   "trip), or drop --analysis-only"),
    (["--interval", "0.05"], "--interval 0.05 is not evaluated with --analysis-only: the analysis' EFFCAP samples "
                             "once per round trip (s = 0.2 s), this candidate every 0.05 s (docs/model.md sec. 20): "
                             "give --interval 0.2 (the round trip)"),
    (["--utilisation", "1", "0.9"], "--utilisation 0.9 is not evaluated with --analysis-only: the analysis' INSTCAP "
                                    "feeds back the whole capacity each round trip (utilisation 1, no mcr): drop it"),
    (["--mcr", "0", "0.1", "--interval", "0.2"], "--mcr 0.1 is not evaluated with --analysis-only: the analysis' "
                                                 "EFFCAP feeds back eq. 28 of the whole capacity"),
    (["--delta", "40", "40"], "--analysis-only evaluates no candidate here: the analysis has one connection; drop "
                              "--analysis-only"),
    (["--variant", "sack"], "--analysis-only evaluates no candidate here: TCP variant 'sack'"),
])
def test_cli_analysis_only_refuses_what_it_cannot_evaluate(main, capsys, args, msg):
    assert main(["design", "--analysis-only", *args]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_analysis_only_refusal_takes_values_it_can_evaluate():
    from tcpabr_model.design.analysis import analysis_only_refusal

    base = Scenario.from_normalized(feedback="instcap", delta=40, bmax=10, psi=20, duration=10.0)
    cands = candidate_grid(m=(3,), n=(4,), interval=(0.2,), utilisation=(1.0,))
    # M = 3 at s = RTT, utilisation 1 (INSTCAP itself), mcr 0: each has a candidate the analysis takes
    assert analysis_only_refusal(base, cands, {"--m": [3], "--interval": [0.2], "--utilisation": [1.0],
                                               "--mcr": [0.0]}) is None
    assert "--m 3" in analysis_only_refusal(base, candidate_grid(m=(3,), n=(4,)), {"--m": [3]})


def test_design_targets_script_on_the_constant_trace(tmp_path):
    """analytics/design_targets.py end to end on the shipped constant trace: on a link whose
    capacity never changes every EFFCAP is INSTCAP, so the held-out target is met at 0 %."""
    import os
    import subprocess
    import sys

    import pandas as pd

    root = DATA.parent.parent
    env = dict(os.environ, PYTHONPATH=str(root))
    r = subprocess.run([sys.executable, str(root / "analytics" / "design_targets.py"), "--traces",
                        str(DATA / "constant_1000pps.down"), "--buffers", "0.5", "--skip-paper", "--workers", "1",
                        "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    df = pd.read_csv(tmp_path / "design_traces.csv")
    assert list(df["round"]) == ["A->B", "B->A"] and df["met"].all()
    assert (df["effcap_th"] == df["instcap_th"]).all() and (df["rel"] == 0).all()


def test_design_targets_script_searches_the_interval(tmp_path):
    """``--intervals``: the measurement interval s in the targets' search (issue 26 item 3); a bad value is
    one line and exit 2."""
    import os
    import subprocess
    import sys

    import pandas as pd

    root = DATA.parent.parent
    env = dict(os.environ, PYTHONPATH=str(root))
    cmd = [sys.executable, str(root / "analytics" / "design_targets.py"), "--traces", str(DATA / "markov3_outage.down"),
           "--buffers", "0.5", "--skip-paper", "--workers", "1", "--replications", "2", "--out", str(tmp_path)]
    bad = subprocess.run(cmd + ["--intervals", "base", "-1"], capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "interval=-1.0 is invalid" in bad.stderr
    r = subprocess.run(cmd + ["--intervals", "base", "0.01"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    df = pd.read_csv(tmp_path / "design_traces.csv")
    assert len(df) == 2
    # seeded: on this 3-level trace with outages the 10-ms interval is what the design halves choose (docs/design.md)
    assert df["effcap"].str.contains("s=0.01").all() and df["met"].all()


def test_front_labels_do_not_overlap():
    """Candidates at (nearly) the same point get stacked labels, not one over the other."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tcpabr_model.plot._design import _OFFSETS, _place_labels

    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 1)
    labels = [(50.0, 0.5, "M=1 N=4"), (50.5, 0.5, "M=4 N=4"), (50.2, 0.501, "M=4 N=16"), (20.0, 0.1, "M=1 N=16")]
    used = _place_labels(ax, labels)
    assert len(used) == 4 and len(set(used[:3])) == 3     # the three crowded ones stacked apart
    assert used[3] == _OFFSETS[0]                         # the lone one where a label goes first
    texts = [t for t in ax.texts]
    fig.canvas.draw()
    from matplotlib.text import Text

    r = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(t, r) for t in texts]     # the text alone, not its leader line
    assert len(boxes) == 4 and not any(boxes[i].overlaps(boxes[j]) for i in range(4) for j in range(i + 1, 4))
    plt.close(fig)


def test_front_label_stays_inside_the_axes():
    """A label at the right edge goes to the left of its point, not out of the axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tcpabr_model.plot._design import _place_labels

    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 1)
    (dx, _dy), = _place_labels(ax, [(99.0, 0.5, "EFFCAP M=4 N=16")])
    assert dx < 0
    plt.close(fig)
