"""The numba cache guard: editing a callee's module must invalidate a cached caller."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import tcpabr_model
from tcpabr_model import _numba_cache

PKG_ROOT = Path(tcpabr_model.__file__).resolve().parent


def test_package_kernels_use_the_guarded_locator():
    from tcpabr_model.sim.abr import greedy_loop as _abr_loop
    from tcpabr_model.sim.kernels import fast_path as _kernel

    stamp = _numba_cache.package_stamp(PKG_ROOT)
    assert _numba_cache.installed_roots()[str(PKG_ROOT)] == stamp
    for fn in (_kernel.simulate_kernel, _abr_loop.abr_loop):
        locator = fn._cache._impl.locator
        assert type(locator).__name__.startswith("TcpabrPackage")
        assert locator.get_source_stamp() == stamp


def test_package_stamp_covers_kernels_and_what_they_import(tmp_path):
    root = tmp_path / "pkgx"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "kern.py").write_text("from numba import njit\nfrom .sub import consts\n")
    (root / "sub" / "consts.py").write_text("from pkgx.sub.deeper import Y\n")
    (root / "sub" / "deeper.py").write_text("Y = 1\n")
    (root / "ui.py").write_text("from .kern import njit\nZ = 1\n")
    names = {p.relative_to(root).as_posix() for p in _numba_cache.kernel_sources(root)}
    assert names == {"kern.py", "sub/__init__.py", "sub/consts.py", "sub/deeper.py"}
    s0 = _numba_cache.package_stamp(root)
    (root / "ui.py").write_text("Z = 2\n")  # cannot reach a kernel: same stamp
    assert _numba_cache.package_stamp(root) == s0
    (root / "sub" / "deeper.py").write_text("Y = 2\n")  # a constant a kernel may freeze
    assert _numba_cache.package_stamp(root) != s0


def test_the_package_kernel_sources_include_the_layout_constants():
    names = {p.relative_to(PKG_ROOT).as_posix() for p in _numba_cache.kernel_sources(PKG_ROOT)}
    assert {"sim/arrays/layout.py", "sim/switch/erica.py", "sim/tcp/connection.py", "sim/kernels/fast_path.py",
            "sim/kernels/general.py", "sim/kernels/port_arrival.py"} <= names
    assert "cli.py" not in names and "plot/_efficiency.py" not in names


def _run(tmp: Path, guard: bool) -> int:
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp)!r})
        if {guard!r}:
            from tcpabr_model import _numba_cache
            _numba_cache.install({str(tmp / 'guardpkg')!r})
        from guardpkg.caller import g
        print(g())
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


def _make_package(tmp: Path) -> None:
    pkg = tmp / "guardpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "callee.py").write_text("from numba import njit\n\n@njit\ndef f():\n    return 1\n")
    (pkg / "caller.py").write_text(
        "from numba import njit\nfrom guardpkg.callee import f\n\n"
        "@njit(cache=True)\ndef g():\n    return f() + 0\n"
    )


def _edit_callee(tmp: Path) -> None:
    (tmp / "guardpkg" / "callee.py").write_text("from numba import njit\n\n@njit\ndef f():\n    return 2\n")


def test_editing_a_callee_recompiles_the_cached_caller(tmp_path):
    _make_package(tmp_path)
    assert _run(tmp_path, guard=True) == 1
    _edit_callee(tmp_path)
    assert _run(tmp_path, guard=True) == 2


def test_without_the_guard_numba_keeps_the_stale_caller(tmp_path):
    """Documents the hazard the guard exists for (numba stamps a cache with its own file)."""
    _make_package(tmp_path)
    assert _run(tmp_path, guard=False) == 1
    _edit_callee(tmp_path)
    assert _run(tmp_path, guard=False) == 1
