"""The stored notebooks read well without running them, and their execution script works.

nbmake (``addopts = --nbmake``) re-executes every notebook; these tests check what is
*stored*: each notebook was executed by ``notebooks/execute.py`` at the small size, every
plot cell carries its figure as a PNG (not a bare ``Text(...)`` or ``<Figure size ...>``
repr), no cell failed, and no notebook forces a matplotlib backend. When a check fails
after a code change, refresh the stored outputs with ``python3 notebooks/execute.py``.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
PLOT_CELL = re.compile(r"\bplt\.(?:subplots|figure|show)\(|\bplot_\w+\(")
BARE_REPR = re.compile(r"^\[?(?:Text\(|<Figure size|<matplotlib\.)")
REFRESH = "refresh the stored outputs with `python3 notebooks/execute.py`"

_spec = importlib.util.spec_from_file_location("notebook_execute", NOTEBOOKS / "execute.py")
execute_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(execute_script)


def _code_cells(path: Path):
    nb = nbformat.read(path, as_version=4)
    return nb, [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


def _has_png(cell) -> bool:
    return any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


def test_notebooks_found():
    assert len(PATHS) >= 5, f"expected the notebooks in {NOTEBOOKS}, found {[p.name for p in PATHS]}"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_no_backend_forced(path):
    _, cells = _code_cells(path)
    for i, cell in cells:
        assert "matplotlib.use(" not in cell.source, (
            f"{path.name} cell {i} forces a matplotlib backend: Jupyter then shows no figure "
            "(the test suite sets MPLBACKEND instead)")


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_stored_executed_at_small_size(path):
    nb, cells = _code_cells(path)
    made = nb.metadata.get(execute_script.SIZE_KEY, {})
    assert made.get("size") == "small", f"{path.name} was not stored by notebooks/execute.py at the small size ({made}): {REFRESH}"
    for i, cell in cells:
        if not cell.source.strip():
            continue
        assert cell.get("execution_count") is not None, f"{path.name} cell {i} stored unexecuted: {REFRESH}"
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, f"{path.name} cell {i} stored with an error {errors[0].get('ename')}: {REFRESH}"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_plot_cells_show_their_figures(path):
    _, cells = _code_cells(path)
    plot_cells = [(i, c) for i, c in cells if PLOT_CELL.search(c.source)]
    assert plot_cells, f"{path.name} has no plot cell (a cell calling plt.subplots/figure/show or plot_*)"
    for i, cell in plot_cells:
        assert _has_png(cell), f"{path.name} cell {i} draws a figure but stores no PNG: {REFRESH}"
        for out in cell.get("outputs", []):
            text = "".join(out.get("data", {}).get("text/plain", ""))
            if BARE_REPR.match(text) and "image/png" not in out.get("data", {}):
                pytest.fail(f"{path.name} cell {i} shows {text[:40]!r} next to its figure: end the cell with plt.show()")


def test_kernel_environment(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("TCPABR_NOTEBOOK_FULL", "1")
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = execute_script.kernel_env(full=False)
    assert "MPLBACKEND" not in env and "TCPABR_NOTEBOOK_FULL" not in env
    assert env["PYTHONPATH"].split(os.pathsep) == [str(NOTEBOOKS.parent), "/elsewhere"]
    assert execute_script.kernel_env(full=True)["TCPABR_NOTEBOOK_FULL"] == "1"


def test_unknown_notebook_exits_2(capsys):
    assert execute_script.main(["no_such_notebook.ipynb"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no_such_notebook.ipynb" in err


def test_execute_stores_the_figure_despite_mplbackend(tmp_path, monkeypatch):
    """A real kernel: with MPLBACKEND=Agg in the caller's environment the figure still shows."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\n"
                                          "fig, ax = plt.subplots()\nax.plot([0, 1], [1, 0])\nplt.show()"),
                nbformat.v4.new_code_cell("import os; print(os.environ.get('TCPABR_NOTEBOOK_FULL'))")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "one.ipynb"
    nbformat.write(nb, path)
    seconds, images = execute_script.execute(path, full=False, timeout=300, write=True)
    stored = nbformat.read(path, as_version=4)
    assert images == 1 and _has_png(stored.cells[0])
    assert stored.cells[1].outputs[0]["text"] == "None\n"
    assert stored.metadata[execute_script.SIZE_KEY]["size"] == "small"
