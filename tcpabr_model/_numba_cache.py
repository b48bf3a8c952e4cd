"""Keep numba's on-disk cache honest across modules.

numba (``cache=True``) stamps each cached function with a hash of *its own* source file
only.  A kernel in ``sim/abr/greedy_loop.py`` that calls ``sim/switch/erica.py`` inlines the callee
into its cached machine code, so after an edit of ``sim/switch/erica.py`` (or a package upgrade
that changes only the callee's file) numba would load the old compiled callee and return
numbers from code that no longer exists.

This module installs, before any kernel is decorated, cache locators that apply to the
files of this package only and stamp every cached function with one hash of the
package's kernel sources: every module that imports numba and every package module those
import, transitively (the constants of ``sim/arrays/layout.py`` are frozen into the kernels, so
they count).  A change in any of them invalidates every cached kernel of the package
(numba recompiles and overwrites the index); functions of other packages keep numba's
own locators.  The locators reuse numba's cache folders
(``NUMBA_CACHE_DIR``, the in-tree ``__pycache__``, or the user-wide cache), so nothing
moves.  numba's locator list is an internal (``CacheImpl._locator_classes``); if a numba
version lacks it, the guard is skipped with a ``RuntimeWarning`` rather than breaking the
import.
"""

from __future__ import annotations

import hashlib
import os
import re
import warnings
from pathlib import Path

__all__ = ["install", "kernel_sources", "package_stamp", "installed_roots"]

_ROOTS: dict[str, str] = {}  # absolute root directory -> stamp of its sources


def _module_file(root: Path, parts: list[str]) -> Path | None:
    """The file of package-relative module ``parts`` under ``root``, if it exists."""
    base = root.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w., \t]+)", re.M)


def _imports(root: Path, path: Path) -> tuple[bool, set[Path]]:
    """(does ``path`` import numba, the package files it imports).

    A line-based scan of ``import``/``from ... import`` statements (``ast`` is about 7x slower
    and this runs on every import of the package); an import inside a string would only
    add a file to the stamp, never drop one.
    """
    text = path.read_text(encoding="utf-8")
    here = list(path.relative_to(root).with_suffix("").parts)
    pkg = here[:-1]  # the package a relative import starts from (also for __init__)
    uses_numba = False
    found: set[Path] = set()
    top = root.name

    def add(parts: list[str], names: list[str]) -> None:
        target = _module_file(root, parts)
        if target is not None:
            found.add(target)
        for name in names:  # "from pkg import submodule"
            sub = _module_file(root, parts + [name])
            if sub is not None:
                found.add(sub)

    for dots, module, what in _FROM.findall(text):
        names = [n.split()[0] for n in what.strip("() \t\n").split(",") if n.split()]
        mod = module.split(".") if module else []
        if not dots:
            uses_numba |= bool(mod) and mod[0] == "numba"
            if mod and mod[0] == top:
                add(mod[1:], names)
        else:
            level = len(dots)
            base = pkg[: len(pkg) - (level - 1)] if level > 1 else pkg
            add(base + mod, names)
    for what in _IMPORT.findall(text):
        for item in what.split(","):
            head = item.split()[0].split(".") if item.split() else [""]
            uses_numba |= head[0] == "numba"
            if head[0] == top:
                add(head[1:], [])
    return uses_numba, found


def kernel_sources(root: str | os.PathLike[str]) -> list[Path]:
    """The files whose code or constants can end up in a compiled kernel: every module
    under ``root`` that imports numba, and every package module they import, transitively."""
    root = Path(root)
    files = [p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts]
    graph = {p: _imports(root, p) for p in files}
    todo = [p for p, (numba_, _) in graph.items() if numba_]
    seen: set[Path] = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(graph[p][1] - seen if p in graph else ())
    return sorted(seen)


def package_stamp(root: str | os.PathLike[str]) -> str:
    """SHA-256 over :func:`kernel_sources` of ``root`` (relative paths and contents)."""
    root = Path(root)
    h = hashlib.sha256()
    for path in kernel_sources(root):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def installed_roots() -> dict[str, str]:
    """The guarded roots and their stamps (a copy)."""
    return dict(_ROOTS)


def _root_of(py_file: str) -> str | None:
    path = os.path.abspath(py_file)
    for root in _ROOTS:
        if path.startswith(root + os.sep):
            return root
    return None


def _guarded(base: type) -> type:
    """A subclass of numba locator ``base`` that only takes files under a guarded root
    and stamps them with the root's whole-source hash."""

    class Locator(base):  # type: ignore[misc, valid-type]
        @classmethod
        def from_function(cls, py_func, py_file):
            if _root_of(py_file) is None:
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return _ROOTS[_root_of(self._py_file)]

    Locator.__name__ = Locator.__qualname__ = "TcpabrPackage" + base.__name__
    return Locator


def install(root: str | os.PathLike[str]) -> bool:
    """Guard the numba cache of every ``cache=True`` function defined under ``root``.

    Must run before those functions are decorated.  Returns ``False`` (and warns) when
    numba's locator list cannot be found, ``True`` otherwise.  Idempotent.
    """
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - numba is a hard dependency
        return False
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list):  # pragma: no cover - depends on numba internals
        warnings.warn(
            "tcpabr_model: numba's cache locators were not found; after editing a kernel "
            "module delete the package's __pycache__/*.nbi and *.nbc files",
            RuntimeWarning,
            stacklevel=2,
        )
        return False
    root_s = os.path.abspath(os.fspath(root))
    _ROOTS[root_s] = package_stamp(root_s)
    if not any(getattr(c, "__name__", "").startswith("TcpabrPackage") for c in classes):
        bases = [
            getattr(caching, name)
            for name in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator",
                         "_UserProvidedCacheLocator", "_InTreeCacheLocator", "_UserWideCacheLocator")
            if hasattr(caching, name)
        ]
        classes[0:0] = [_guarded(b) for b in bases]
    return True
