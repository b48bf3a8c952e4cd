"""`tcpabr simulate` in-process for the CLI tests: the command table cut to the simulator (light
imports) and one call that returns (exit code, stdout, stderr)."""

from __future__ import annotations

import pytest


@pytest.fixture(name="main")
def simulate_main(monkeypatch):
    """``tcpabr_model.cli.main`` with only ``tcpabr simulate`` registered."""
    import tcpabr_model.cli as cli

    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("tcpabr_model.sim.cli",))
    return cli.main


def run_cli(main, capsys, argv):
    """(exit code, stdout, stderr) of ``main(argv)``; argparse's ``SystemExit`` is a code too."""
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err
