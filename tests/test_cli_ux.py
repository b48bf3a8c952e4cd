"""Ergonomics of the ``tcpabr`` command: --version, help texts, tcpabr plot, tcpabr validate."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pandas as pd
import pytest

from tcpabr_model import __version__
from tcpabr_model.cli import _COMMANDS, build_parser, main, plain_text

MINE = ("effcap", "formula", "sweep", "reproduce", "plot", "validate")


def _sub(parser, name):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return a.choices[name]
    raise KeyError(name)


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out == f"tcpabr {__version__}\n"


def test_plain_text_strips_rst():
    assert plain_text("The ``tcpabr`` command, :class:`~tcpabr_model.errors.ModelError` and "
                      ":func:`run_sweep`.") == "The tcpabr command, ModelError and run_sweep."


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_help_has_no_markup_and_shows_defaults(command):
    parser = build_parser(command)
    text = _sub(parser, command).format_help()
    for mark in ("``", ":class:", ":func:", ":mod:", ":meth:"):
        assert mark not in text, (command, mark)
    top = parser.format_help()
    assert "``" not in top and "COMMAND" in top


@pytest.mark.parametrize("command", MINE)
def test_every_flag_of_my_commands_has_a_sentence(command):
    p = _sub(build_parser(command), command)
    assert p.description and len(p.description.split()) > 5
    for a in p._actions:
        if a.dest != "help":
            assert a.help and len(a.help.split()) >= 2, (command, a.dest)


def test_defaults_are_shown():
    text = _sub(build_parser("formula"), "formula").format_help()
    assert "(default: 155.52)" in text and "(default: memory)" in text
    assert "(default: None)" not in text


def test_top_level_lists_every_command():
    text = build_parser().format_help()
    for name in _COMMANDS:
        assert f"    {name}" in text


# ---- tcpabr plot --------------------------------------------------------------------------
@pytest.fixture
def table(tmp_path):
    df = pd.DataFrame({"psi": [1.0, 10.0, 100.0] * 2, "feedback": ["instcap"] * 3 + ["none"] * 3,
                       "efficiency": [0.5, 0.7, 0.9, 0.4, 0.6, 0.8], "efficiency_hw": [0.01] * 6,
                       "status": ["ok"] * 6})
    path = tmp_path / "sweep.csv"
    df.to_csv(path, index=False)
    return path


def test_plot_writes_a_figure(table, capsys):
    out = table.parent / "fig.png"
    assert main(["plot", str(table), "--x", "psi", "--y", "efficiency", "--hue", "feedback", "--out", str(out)]) == 0
    assert out.stat().st_size > 1000 and capsys.readouterr().out == f"wrote {out} (6 rows, 2 curves)\n"
    assert main(["plot", str(table), "--x", "psi", "--y", "efficiency"]) == 0
    assert (table.parent / "sweep_efficiency_vs_psi.png").exists()


@pytest.mark.parametrize("argv, fragment", [
    (["--x", "psi", "--y", "nosuch"], "--y='nosuch' is invalid: not a column of"),
    (["--x", "psi", "--y", "efficiency", "--hue", "nosuch"], "--hue='nosuch' is invalid"),
    (["--x", "feedback", "--y", "efficiency"], "--x='feedback' is invalid: the column is not numeric"),
    (["--x", "psi", "--y", "efficiency", "--out", "{dir}/f.jpg"], "must end in .png or .pdf or .svg"),
    (["--x", "psi", "--y", "efficiency", "--out", "{dir}/sweep.csv/f.png"], "it is an existing file, not a folder"),
    (["--x", "psi"], "the following arguments are required: --y"),
])
def test_plot_bad_input(table, argv, fragment, capsys):
    argv = [a.replace("{dir}", str(table.parent)) for a in argv]
    try:
        rc = main(["plot", str(table), *argv])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    assert rc == 2 and fragment.replace("{dir}", str(table.parent)) in err and err.count("\n") == 1


def test_plot_missing_table(tmp_path, capsys):
    assert main(["plot", str(tmp_path / "none.csv"), "--x", "a", "--y", "b"]) == 2
    assert f"TABLE '{tmp_path / 'none.csv'}' is invalid: no such file" in capsys.readouterr().err


# ---- tcpabr validate, from any folder -------------------------------------------------------
def test_validate_runs_from_another_folder(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-m", "tcpabr_model", "validate", "-k", "check_atm"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "checks passed" in r.stdout and "FAIL" not in r.stdout


def test_validate_unknown_check(capsys):
    assert main(["validate", "-k", "nosuch"]) == 2
    assert "--only='nosuch' is invalid: no check name contains it" in capsys.readouterr().err
