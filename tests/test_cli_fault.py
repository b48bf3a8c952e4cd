"""A command that fails on a defect of the toolkit (not a ValueError, ModelError or OSError)
writes a fault report and prints one line naming it, exit status 70; ``TCPABR_DEBUG=1`` shows
the traceback instead; a MemoryError is one line, exit 1 (tcpabr_model/runtime/fault.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tcpabr_model import cli
from tcpabr_model.runtime import fault


def _run(monkeypatch, tmp_path, exc, env=None):
    """main() of ``tcpabr formula atm --mss 512`` whose computation raises ``exc``; its status."""
    import tcpabr_model.closed_forms.atm as atm

    def broken(*args, **kwargs):
        raise exc
    monkeypatch.chdir(tmp_path)
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(atm, "cells_per_packet", broken)
    return cli.main(["formula", "atm", "--mss", "512"])


def test_a_defect_gives_a_fault_report(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv(fault.DEBUG_ENV, raising=False)
    monkeypatch.delenv(fault.FAULT_DIR_ENV, raising=False)
    monkeypatch.setenv("TCPABR_SOMETHING", "kept")
    try:
        raise KeyError("inner")
    except KeyError as inner:
        exc = TypeError("unsupported operand\ntype(s)")
        exc.__cause__ = inner
    status = _run(monkeypatch, tmp_path, exc)
    err = capsys.readouterr().err.strip().splitlines()
    assert status == cli.EXIT_FAULT == 70
    assert len(err) == 1 and err[0].startswith("tcpabr formula: internal error (TypeError: unsupported operand type(s))")
    files = list(tmp_path.glob("tcpabr-fault-*.txt"))
    assert len(files) == 1 and str(files[0]) in err[0]
    text = files[0].read_text()
    assert "command:     tcpabr formula atm --mss 512" in text
    assert "Traceback (most recent call last)" in text and "KeyError: 'inner'" in text   # chained cause kept
    assert "TypeError: unsupported operand" in text and "numpy " in text and "TCPABR_SOMETHING=kept" in text


def test_fault_dir_and_fallback(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv(fault.DEBUG_ENV, raising=False)
    target = tmp_path / "faults"
    target.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv(fault.FAULT_DIR_ENV, str(target))
    assert _run(monkeypatch, work, RuntimeError("boom")) == 70
    assert len(list(target.glob("tcpabr-fault-*.txt"))) == 1 and not list(work.glob("tcpabr-fault-*"))
    # a folder that does not exist is skipped for the next one (the working directory)
    monkeypatch.setenv(fault.FAULT_DIR_ENV, str(tmp_path / "missing"))
    assert _run(monkeypatch, work, RuntimeError("boom")) == 70
    assert len(list(work.glob("tcpabr-fault-*.txt"))) == 1
    capsys.readouterr()


def test_no_folder_writable_prints_the_traceback(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv(fault.DEBUG_ENV, raising=False)
    monkeypatch.setattr(fault, "_candidates", lambda: [tmp_path / "missing"])
    assert _run(monkeypatch, tmp_path, RuntimeError("boom")) == 70
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "no fault report could be written" in err


def test_debug_lets_the_exception_through(monkeypatch, tmp_path):
    with pytest.raises(RuntimeError, match="boom"):
        _run(monkeypatch, tmp_path, RuntimeError("boom"), env={fault.DEBUG_ENV: "1"})
    assert not list(tmp_path.glob("tcpabr-fault-*"))


def test_memory_error_is_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv(fault.DEBUG_ENV, raising=False)
    assert _run(monkeypatch, tmp_path, MemoryError()) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "out of memory" in err[0] and not list(tmp_path.glob("tcpabr-fault-*"))


def test_input_errors_are_not_faults(monkeypatch, tmp_path, capsys):
    assert _run(monkeypatch, tmp_path, ValueError("--mss=0 is invalid")) == 2
    assert capsys.readouterr().err.strip() == "tcpabr formula: error: --mss=0 is invalid"
    assert not list(tmp_path.glob("tcpabr-fault-*"))


def test_a_real_process(tmp_path):
    """The installed command, a subprocess: the report is there and stderr is one line."""
    env = {**os.environ, fault.FAULT_DIR_ENV: str(tmp_path)}
    env.pop(fault.DEBUG_ENV, None)
    prog = ("import sys\nimport tcpabr_model.closed_forms.atm as atm\nfrom tcpabr_model import cli\n"
            "atm.cells_per_packet = lambda mss: 1 / 0\n"
            "sys.exit(cli.main(['formula', 'atm', '--mss', '512']))\n")
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 70, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "ZeroDivisionError" in out.stderr
    (report,) = tmp_path.glob("tcpabr-fault-*.txt")
    assert "ZeroDivisionError: division by zero" in report.read_text()
