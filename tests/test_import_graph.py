"""The package's layout (tcpabr_model._layout_map): no import cycle, no upward import between
the declared layers, no module over 600 lines, no folder over 12 modules, every declared
layer names a module, and docs/package_map.md names every folder.  The graph builder itself
is tested first on small synthetic packages, so that a failure below means the package, not
the builder."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tcpabr_model import _layout_map as lm

ROOT = Path(__file__).resolve().parents[1]


def _package(tmp_path, files: dict) -> Path:
    """Write a package ``pkg`` under ``tmp_path``: ``{relative path: source}``."""
    root = tmp_path / "pkg"
    for rel, src in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(src), encoding="utf-8")
    return root


# ---------------------------------------------------------------- the builder, on synthetic packages
def test_relative_function_level_and_submodule_imports(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": '"""Synthetic package.\n\nMore text."""\nVERSION = 1\n',
        "low.py": "X = 1\n",
        "sub/__init__.py": '"""Sub folder."""\n',
        "sub/deep.py": "from ..low import X\nfrom .. import VERSION\n",
        "high.py": """\
            import os
            import pkg.sub


            def f():
                from .sub import deep      # a submodule: an import of pkg.sub.deep
                from . import low, VERSION  # a submodule and a name of pkg
                from .missing import thing  # no such module
                return deep, low, VERSION, thing, os
            """,
        "notes/readme.py": "import pkg.high\n",     # not a package folder (no __init__.py): not read
    })
    g = lm.build_graph(root)
    assert sorted(g.modules) == ["pkg", "pkg.high", "pkg.low", "pkg.sub", "pkg.sub.deep"]
    assert g.modules["pkg"].doc == "Synthetic package."
    assert g.modules["pkg.sub"].is_package and not g.modules["pkg.low"].is_package
    assert g.edges["pkg.sub.deep"] == {"pkg": (2,), "pkg.low": (1,)}
    assert g.edges["pkg.high"] == {"pkg": (7,), "pkg.low": (7,), "pkg.sub": (2,), "pkg.sub.deep": (6,)}
    assert g.unresolved == [("pkg.high", 8, "pkg.missing")]
    assert g.folders() == ["pkg", "pkg.sub"]
    assert lm.room_of(g, "pkg.sub.deep") == "pkg.sub" and lm.room_of(g, "pkg.low") == "pkg.low"
    assert lm.room_imports(g)["pkg.high"] == ["pkg", "pkg.low", "pkg.sub"]
    assert lm.cycles(g) == []


def test_cycles_through_function_level_imports(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from .b import g\n",
        "b.py": "def g():\n    from . import a\n    return a\n",            # a <-> b
        "c.py": "import pkg.d\n",
        "d.py": "def h():\n    from .e import k\n",
        "e.py": "from .c import *\nk = 1\n",                                 # c -> d -> e -> c
        "f.py": "from . import a, c\n",                                      # imports both, in neither
    })
    g = lm.build_graph(root)
    assert lm.cycles(g) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d", "pkg.e"]]
    found = [v for v in lm.violations(g, layers={}) if v.startswith("import cycle")]
    assert found[0] == "import cycle among a, b: a -> b (line 1); b -> a (line 2)"
    assert len(found) == 2


def test_layers_longest_prefix_and_upward_imports(tmp_path):
    layers = {"pkg": 0, "pkg.sub": 2, "pkg.sub.kernels": 1, "pkg.top": 3}
    assert lm.layer_of("pkg.sub.kernels.fast", layers) == 1
    assert lm.layer_of("pkg.sub.kernels", layers) == 1
    assert lm.layer_of("pkg.sub.driver", layers) == 2
    assert lm.layer_of("pkg.subway", layers) == 0          # a prefix matches whole components only
    assert lm.layer_of("other.x", layers) is None
    root = _package(tmp_path, {
        "__init__.py": "",
        "sub/__init__.py": "",
        "sub/kernels/__init__.py": "",
        "sub/kernels/fast.py": "def f():\n    from ..driver import run\n",   # 1 -> 2: upward
        "sub/driver.py": "from .kernels import fast\nfrom ..util import u\n",  # 2 -> 1, 2 -> 0
        "util.py": "u = 1\n",
        "top.py": "from .sub.driver import run\n",                            # 3 -> 2
    })
    g = lm.build_graph(root)
    assert lm.upward_imports(g, layers) == [("pkg.sub.kernels.fast", 1, "pkg.sub.driver", 2, (2,))]
    assert lm.upward_imports(g, {}) == []                  # nothing declared, nothing checked
    assert "upward import: sub.kernels.fast (layer 1) imports sub.driver (layer 2), line 2" in \
        lm.violations(g, layers)
    assert lm.stale_layers(g, dict(layers, **{"pkg.gone": 1, "other": 0})) == ["pkg.gone"]


def test_size_limits(tmp_path):
    files = {"__init__.py": "", "big.py": "x = 1\n" * (lm.MAX_MODULE_LINES + 1),
             "ok.py": "x = 1\n" * lm.MAX_MODULE_LINES}
    files.update({f"crowd/m{i}.py": "" for i in range(lm.MAX_FOLDER_MODULES)})
    files["crowd/__init__.py"] = ""                          # __init__ counts: 13 modules
    files.update({f"fine/m{i}.py": "" for i in range(lm.MAX_FOLDER_MODULES - 1)})
    files["fine/__init__.py"] = ""
    g = lm.build_graph(_package(tmp_path, files))
    assert lm.long_modules(g) == [("pkg.big", lm.MAX_MODULE_LINES + 1)]
    assert lm.crowded_folders(g) == [("pkg.crowd", lm.MAX_FOLDER_MODULES + 1)]


def test_main_prints_the_map_and_exits_1_on_a_violation(tmp_path, capsys):
    clean = _package(tmp_path / "clean", {"__init__.py": '"""Clean."""\n', "a.py": '"""Module a."""\n'})
    assert lm.main(["--root", str(clean)]) == 0
    out = capsys.readouterr().out
    assert "Module a." in out and "Violations: 0 (none)" in out
    cyclic = _package(tmp_path / "cyclic", {"__init__.py": "", "a.py": "from . import b\n", "b.py": "from . import a\n"})
    assert lm.main(["--root", str(cyclic)]) == 1
    assert "import cycle among a, b" in capsys.readouterr().out


# ---------------------------------------------------------------- the package itself
@pytest.fixture(scope="module")
def graph():
    return lm.build_graph()


def _lines(items) -> str:
    return "\n".join(str(x) for x in items)


def test_every_import_resolves(graph):
    assert graph.unresolved == [], _lines(graph.unresolved)


def test_no_import_cycles(graph):
    found = [v for v in lm.violations(graph) if v.startswith("import cycle")]
    assert not found, _lines(found)


def test_no_upward_imports(graph):
    found = [v for v in lm.violations(graph) if v.startswith("upward import")]
    assert not found, _lines(found)


def test_every_declared_layer_names_a_module(graph):
    assert lm.stale_layers(graph) == []


def test_no_module_over_the_line_limit(graph):
    assert lm.long_modules(graph) == []


def test_no_folder_over_the_module_limit(graph):
    assert lm.crowded_folders(graph) == []


def test_package_map_names_every_folder(graph):
    text = (ROOT / "docs" / "package_map.md").read_text(encoding="utf-8")
    missing = [f for f in graph.folders()
               if f"`{f.replace('.', '/')}/`" not in text]
    assert not missing, f"docs/package_map.md does not name these folders (as `tcpabr_model/x/`): {missing}"


def test_command_line_map(graph):
    r = subprocess.run([sys.executable, "-m", "tcpabr_model._layout_map"], capture_output=True, text=True, check=False,
                       timeout=120, cwd=ROOT)
    assert r.returncode == (1 if lm.violations(graph) else 0), r.stderr
    for folder in graph.folders():
        assert f"{folder.replace('.', '/')}/  (" in r.stdout
    assert "Rooms (layer" in r.stdout and "Violations:" in r.stdout
