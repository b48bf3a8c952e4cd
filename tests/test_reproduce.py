"""`tcpabr reproduce` at the tiny size (seconds), its building blocks and its verdict rules."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from tcpabr_model.cli import main
from tcpabr_model.reproduce import SIZES, SPECS, Est, parse_figures, reproduce
from tcpabr_model.reproduce import fig10_13, fig19_22
from tcpabr_model.sweep import Grid, build_sim_scenario


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("reproduce")
    res = reproduce(figures=[8], size="tiny", out=base / "out", cache_dir=base / "cache", workers=2, progress=False)
    return base, res


def test_tiny_run_writes_png_csv_and_report(tiny_run):
    base, res = tiny_run
    assert list(res.figures) == ["fig08_09"]
    fr = res.figures["fig08_09"]
    assert fr.draw_error == ""
    assert (base / "out" / "fig08_09.png").stat().st_size > 10_000
    df = pd.read_csv(base / "out" / "fig08_09.csv")
    for col in ("psi", "bmax", "feedback", "source", "mode", "optimistic", "conservative", "efficiency",
                "efficiency_hw", "efficiency_wire", "efficiency_wire_hw", "status", "seed", "seconds", "cached"):
        assert col in df.columns, col
    # 2 feedbacks x 2 buffers x 2 psi analysis points; 16 simulated points
    assert (df["source"] == "analysis").sum() == 8
    assert (df["source"] == "simulation").sum() == 16
    assert set(df["mode"]) == {"analysis", "embedded", "continuous"}
    assert (df["status"] == "ok").all()
    sim = df[df["source"] == "simulation"]
    assert ((sim["efficiency_wire"] > 0) & (sim["efficiency_wire"] <= 1)).all()
    assert (sim["replications"] == SIZES["tiny"].replications).all()
    rep = (base / "out" / "REPORT.md").read_text()
    assert rep.startswith("# Reproduction of Shakkottai et al.")
    assert "## Summary" in rep and "Total run time:" in rep and "Size:** `tiny`" in rep
    assert rep.count("### Claim") == len(fr.spec.claims) == 4
    assert rep.count("**Verdict: ") == 4
    assert "![fig08_09](fig08_09.png)" in rep
    assert "not meaningful" in rep
    # no template text reaches the reader (issue 24: a string without its f printed "{res.n_cached}")
    assert "{" not in rep.replace("{{", "") and f"{res.n_cached} from the cache, {res.n_failed} failed." in rep
    v = res.verdicts()
    assert list(v.columns) == ["key", "figure", "status", "reason"]
    assert set(v["status"]) <= {"supported", "partly", "not supported", "not evaluated"}


def test_csv_writes_counts_as_integers(tiny_run):
    base, _ = tiny_run
    raw = pd.read_csv(base / "out" / "fig08_09.csv", dtype=str, keep_default_na=False)
    # n_states and nnz are empty on the simulated rows: integers all the same (863, not 863.0)
    for col in ("n_states", "nnz", "replications", "n_connections", "bmax", "wmax", "seed"):
        given = [v for v in raw[col] if v != ""]
        assert given and all(v.isdigit() for v in given), (col, given[:3])
    assert (raw["n_states"] == "").sum() == 16 and (raw["replications"] == "").sum() == 8
    assert all("." in v for v in raw["psi"])     # a float column stays float, even at whole values


def test_integer_columns_with_gaps_and_a_failed_point():
    from tcpabr_model.reproduce._run import _integers

    # as the sweep returns them when a point failed (its n_states NaN made the column float)
    rows = [{"psi": 2.0, "n_states": 863.0, "m": 7, "eff": 0.5}, {"psi": 5.0, "n_states": float("nan"), "m": 7},
            {"psi": 20.0, "eff": 0.25}]
    table = pd.concat([pd.DataFrame(rows[:2]), pd.DataFrame(rows[2:])], ignore_index=True)
    assert table["m"].dtype == float and table["n_states"].dtype == float
    out = _integers(table, rows)
    assert str(out["n_states"].dtype) == "Int64" and str(out["m"].dtype) == "Int64"
    assert out["psi"].dtype == float and out["eff"].dtype == float and table["m"].dtype == float  # a copy
    assert out.to_csv(index=False).splitlines() == ["psi,n_states,m,eff", "2.0,863,7,0.5", "5.0,,7,",
                                                    "20.0,,,0.25"]


def test_rerun_from_cache_is_identical(tiny_run):
    base, res = tiny_run
    res2 = reproduce(figures="9", size="tiny", out=base / "out2", cache_dir=base / "cache", workers=2,
                     progress=False)
    assert res2.n_cached == res2.n_points == res.n_points
    fr1, fr2 = res.figures["fig08_09"], res2.figures["fig08_09"]
    assert fr1.compute_seconds > 0 and fr1.cached_seconds == 0
    assert fr2.compute_seconds == 0 and fr2.cached_seconds == pytest.approx(fr1.compute_seconds)  # only this run
    assert "compute time of its points in this run 0.0 s" in (base / "out2" / "REPORT.md").read_text()
    a = pd.read_csv(base / "out" / "fig08_09.csv")
    b = pd.read_csv(base / "out2" / "fig08_09.csv")
    cols = ["optimistic", "conservative", "efficiency", "efficiency_hw", "seed"]
    pd.testing.assert_frame_equal(a[cols], b[cols])


def test_cli_runs_from_cache_and_rejects_bad_figures(tiny_run, tmp_path, capsys):
    base, _ = tiny_run
    rc = main(["reproduce", "--size", "tiny", "--figures", "8", "--out", str(tmp_path / "o"),
               "--cache", str(base / "cache"), "--workers", "1", "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "fig08_09.png" in out and "REPORT.md" in out and "24 cached" in out
    assert "0.0 s of compute in this run" in out
    assert main(["reproduce", "--figures", "7,8"]) == 2
    err = capsys.readouterr().err
    assert "figures" in err and "8..22" in err and "Traceback" not in err


@pytest.mark.parametrize("bad", ["7", "8,x", "", [23], 0, [8.5]])
def test_parse_figures_rejects(bad):
    with pytest.raises(ValueError, match="figures"):
        parse_figures(bad)


def test_parse_figures_accepts():
    assert parse_figures(None) == tuple(range(8, 23))
    assert parse_figures("14, 8,9") == (8, 9, 14)
    assert parse_figures(22) == (22,)
    assert parse_figures([10, 10]) == (10,)


def test_bad_size_and_seed():
    with pytest.raises(ValueError, match="size"):
        reproduce(figures=[8], size="huge")
    with pytest.raises(ValueError, match="seed"):
        reproduce(figures=[8], size="tiny", seed=-1)


@pytest.mark.parametrize("size", ["tiny", "quick", "full"])
def test_every_point_of_every_size_is_a_valid_scenario(size):
    """All grids build (figure settings valid in physical and normalised units), without running."""
    from tcpabr_model.markov import Scenario as MarkovScenario

    n = 0
    for spec in SPECS:
        for part in spec.parts(SIZES[size]):
            assert isinstance(part.grid, Grid)
            for p in part.grid:
                n += 1
                if part.method == "analysis":
                    MarkovScenario(**p)
                else:
                    q = {k: v for k, v in p.items() if k != "replications"}
                    sc = build_sim_scenario(q)
                    assert sc.duration == SIZES[size].duration
    assert n > 20


def test_paper_settings_in_the_grids():
    """Spot-check the paper's parameters: M = 7, N = 49 (Figs. 10-13); Case 1 / 2 of Section VII."""
    pts = [p for part in fig10_13.parts(SIZES["full"]) for p in part.grid]
    eff = [p for p in pts if p["feedback"] == "effcap"]
    assert {(p["m"], p["n"]) for p in eff} == {(7, 49)}
    assert {p["bmax"] for p in eff} == {8, 9, 10, 11, 12}
    sc = {part.tags["case"]: build_sim_scenario({k: v for k, v in part.grid[0].items() if k != "replications"})
          for part in fig19_22.parts(SIZES["full"])}
    assert sc["EFFCAP case 1"].m == (8, 12) and sc["EFFCAP case 1"].n == (88, 132)
    assert sc["EFFCAP case 2"].m == (10, 10) and sc["EFFCAP case 2"].n == (110, 110)
    assert sc["EFFCAP case 1"].buffer_packets == 18 and sc["EFFCAP case 1"].rtt == (0.24, 0.36)
    assert sc["EFFCAP case 1"].share == (0.5, 0.5)


def test_est_arithmetic():
    a, b = Est(1.0, 0.03), Est(0.5, 0.04)
    d = a - b
    assert d.mean == 0.5 and math.isclose(d.hw, 0.05)
    r = a / b
    assert r.mean == 2.0 and math.isclose(r.hw, 2.0 * math.hypot(0.03, 0.08))
    assert math.isclose(a.rel_to(b).mean, 1.0)
    m = Est.average([Est(1.0, 0.3), Est(3.0, 0.4)])
    assert m.mean == 2.0 and math.isclose(m.hw, 0.25)
    assert a.lo == 0.97 and a.hi == 1.03


def _fig10_table(effcap_factor, hw=0.002):
    rows = []
    for b in (8, 10):
        for psi in (0.5, 1.0, 20.0, 50.0):
            inst = 0.5 if psi < 5 else 0.8
            for scheme, e in (("INSTCAP", inst), ("EFFCAP", inst * effcap_factor)):
                rows.append(dict(scheme=scheme, bmax=b, psi=psi, efficiency=e, efficiency_hw=hw, status="ok"))
    return pd.DataFrame(rows)


@pytest.mark.parametrize("factor,status", [(0.965, "supported"), (0.90, "partly"), (1.01, "not supported")])
def test_fig10_rule(factor, status):
    check = fig10_13.CLAIMS[0].check
    v = check(_fig10_table(factor))
    assert v.status == status
    assert v.numbers and "±" in v.numbers[0]


def test_fig10_rule_without_points_is_not_evaluated():
    v = fig10_13.CLAIMS[0].check(_fig10_table(0.965).query("psi < 5"))
    assert v.status == "not evaluated"


def test_points_describing_one_system_share_one_run():
    """A default spelled out in one figure and omitted in another is the same system: one run,
    the same numbers, each point keeping its own parameters; a different system runs apart."""
    from tcpabr_model.reproduce._run import _key, _run_method

    a = {"delta": 40, "bmax": 10, "psi": 20.0, "feedback": "instcap", "duration": 20.0, "warmup": 2.0,
         "replications": 2}
    b = dict(a, capacity_mode="continuous")     # Scenario's default
    c = dict(a, psi=5.0)
    reps = {_key(a): a, _key(b): a}
    rows, runs = _run_method("simulation", [a, b, c, a], seed=3, cache_dir=None, workers=1, client=None,
                             progress=False, representatives=reps)
    assert runs == 2
    assert len(rows) == 3
    ra, rb, rc = (rows[_key(p)] for p in (a, b, c))
    assert ra["efficiency"] == rb["efficiency"] and ra["seed"] == rb["seed"]
    assert rb["capacity_mode"] == "continuous"
    assert "capacity_mode" not in ra
    assert rc["psi"] == 5.0 and rc["seed"] != ra["seed"]
    # the run does not depend on which other points are asked for: b alone runs as a
    rows_b, _ = _run_method("simulation", [b], seed=3, cache_dir=None, workers=1, client=None, progress=False,
                            representatives=reps)
    assert rows_b[_key(b)]["efficiency"] == ra["efficiency"]


@pytest.mark.parametrize("size", ["quick", "full"])
def test_representatives_join_only_the_same_system(size):
    from tcpabr_model.reproduce._run import _key, _representatives, _system_key

    rep = _representatives(SIZES[size])
    moved = {k: r for k, r in rep.items() if _key(r) != k}
    assert moved        # Fig. 8's continuous-mode points are Fig. 10's INSTCAP / TCP alone points
    for k, r in rep.items():
        assert _key(rep[_key(r)]) == _key(r)        # a representative represents itself
    for k, r in moved.items():
        p = json.loads(k)
        assert _system_key("simulation", p) == _system_key("simulation", r)
