"""Result files are whole or absent (issue 24 item 2): a writer that fails part-way leaves the
previous file and no temporary file, and the command says what failed in one line (exit 1)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import uuid

import numpy as np
import pandas as pd
import pytest

from tcpabr_model.cli import main
from tcpabr_model.runtime import atomic
from tcpabr_model.runtime.atomic import (
    OutputError,
    atomic_open,
    save_figure,
    save_npz,
    write_table,
    write_text,
)


def _enospc():
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_writer_failing_part_way_keeps_the_old_file(tmp_path):
    path = tmp_path / "REPORT.md"
    path.write_text("old report\n")
    with pytest.raises(OutputError, match=rf"cannot write {path}: No space left on device") as e:
        with atomic_open(path) as fh:
            fh.write("new " * 10_000)
            fh.flush()
            raise _enospc()
    assert e.value.errno == errno.ENOSPC and e.value.path == str(path)
    assert path.read_text() == "old report\n"
    assert _leftovers(tmp_path) == []


def test_a_failed_first_write_leaves_no_file(tmp_path):
    path = tmp_path / "t.csv"
    with pytest.raises(OutputError):
        with atomic_open(path) as fh:
            fh.write("a,b\n1,")
            raise _enospc()
    assert list(tmp_path.iterdir()) == []


def test_an_interrupt_leaves_the_old_file_and_is_not_converted(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_open(path) as fh:
            fh.write("new")
            raise KeyboardInterrupt
    assert path.read_text() == "old" and _leftovers(tmp_path) == []


def test_success_replaces_whole_and_keeps_the_mode(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("old")
    os.chmod(path, 0o640)
    write_text(path, "new text\n")
    assert path.read_text() == "new text\n" and (os.stat(path).st_mode & 0o777) == 0o640
    fresh = tmp_path / "y.txt"
    write_text(fresh, "y")
    mask = os.umask(0)
    os.umask(mask)
    assert (os.stat(fresh).st_mode & 0o777) == 0o666 & ~mask   # as open() would, not mkstemp's 0600
    assert _leftovers(tmp_path) == []


def test_table_figure_and_npz_writers(tmp_path):
    df = pd.DataFrame({"psi": [1.0, 2.0], "eff": [0.5, 0.6]})
    write_table(df, tmp_path / "t.csv")
    assert pd.read_csv(tmp_path / "t.csv").equals(df)
    save_npz(tmp_path / "tr.npz", a=np.arange(3))
    assert np.load(tmp_path / "tr.npz")["a"].tolist() == [0, 1, 2]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    save_figure(fig, tmp_path / "f.png", dpi=50)
    save_figure(fig, tmp_path / "f.svg")
    plt.close(fig)
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (tmp_path / "f.svg").read_bytes()[:400]
    assert _leftovers(tmp_path) == []


def test_cache_entries_are_atomic(tmp_path, monkeypatch):
    from tcpabr_model.sweep import _cache

    key = "ab" * 32
    first = _cache.store(str(tmp_path), key, {"x": 1.0}, 0.5, {})
    before = open(first, "rb").read()

    real_open = open

    def failing_open(file, mode="r", *a, **k):
        fh = real_open(file, mode, *a, **k)
        if "w" in mode and os.path.basename(str(file)).startswith("."):
            fh.write(b'{"format": 1, "ke')       # part of the record, then the disk is full
            fh.flush()
            raise _enospc()
        return fh

    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(OutputError, match=rf"cannot write {first}"):
        _cache.store(str(tmp_path), key, {"x": 2.0}, 0.5, {})
    monkeypatch.undo()
    assert open(first, "rb").read() == before and _leftovers(tmp_path) == []


def _table(tmp_path):
    t = tmp_path / "t.csv"
    t.write_text("psi,efficiency\n1,0.5\n10,0.7\n")
    return t


def test_cli_full_disk_is_one_line_exit_1_naming_the_path(tmp_path, monkeypatch, capsys):
    """``tcpabr plot --out`` on a full disk: exit 1, one line naming the file, the old figure kept."""
    out = tmp_path / "fig.png"
    out.write_bytes(b"old figure")

    def savefig(self, fname, *a, **k):
        with open(fname, "wb") as fh:
            fh.write(b"\x89PNG partial")
        raise _enospc()

    import matplotlib.figure

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    rc = main(["plot", str(_table(tmp_path)), "--x", "psi", "--y", "efficiency", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 1
    assert err == f"tcpabr plot: error: cannot write {out}: No space left on device\n"
    assert out.read_bytes() == b"old figure" and _leftovers(tmp_path) == []


def test_cli_report_full_disk(tmp_path, monkeypatch, capsys):
    """``tcpabr reproduce --out``: REPORT.md on a full disk; one line, exit 1, the old report kept."""
    out = tmp_path / "r"
    out.mkdir()
    (out / "REPORT.md").write_text("previous report\n")

    def failing(path, text, encoding="utf-8"):
        with atomic.atomic_open(path, encoding=encoding) as fh:
            fh.write(text[: len(text) // 2])
            raise _enospc()

    monkeypatch.setattr(atomic, "write_text", failing)   # what _report.write_report calls
    rc = main(["reproduce", "--size", "tiny", "--figures", "8", "--out", str(out), "--no-progress",
               "--cache", str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert rc == 1, err
    assert err == f"tcpabr reproduce: error: cannot write {out / 'REPORT.md'}: No space left on device\n"
    assert (out / "REPORT.md").read_text() == "previous report\n" and _leftovers(out) == []


# ---- a real full file system (a 200 KiB tmpfs; skipped where mounting is not allowed) --------
@pytest.fixture
def small_fs(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    if not sys.platform.startswith("linux"):
        pytest.skip("tmpfs needs Linux")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", f"tcpabr-{uuid.uuid4().hex[:8]}", str(mnt)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({p.stderr.strip() or p.returncode})")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_real_full_disk(small_fs, tmp_path, capsys):
    old = small_fs / "fig.png"
    old.write_bytes(b"old figure")
    (small_fs / "filler").write_bytes(b"\0" * 150_000)
    with pytest.raises(OutputError, match="No space left on device"):
        write_text(small_fs / "big.md", "x" * 100_000)
    assert not (small_fs / "big.md").exists() and _leftovers(small_fs) == []
    # the command: a figure larger than the room left
    (small_fs / "filler2").write_bytes(b"\0" * (200 * 1024 - 150_000 - 20_000))
    rc = main(["plot", str(_table(tmp_path)), "--x", "psi", "--y", "efficiency", "--out", str(old)])
    err = capsys.readouterr().err
    assert rc == 1 and err == f"tcpabr plot: error: cannot write {old}: No space left on device\n"
    assert old.read_bytes() == b"old figure" and _leftovers(small_fs) == []
