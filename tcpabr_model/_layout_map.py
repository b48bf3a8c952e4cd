"""The package's layout as data: import graph, cycles, layers and size limits.

``python -m tcpabr_model._layout_map`` prints a one-page map of the package (each folder
with the first line of its docstring, its modules with line counts and docstrings, which
rooms each room imports) followed by the violations, and exits with status 1 if there is
any.  ``tests/test_import_graph.py`` fails on the same violations.

Terms
-----
module
    A ``.py`` file of the package, named by its dotted name (a folder's ``__init__.py`` is
    the folder's own name, ``tcpabr_model.sim``).
folder
    A package directory (it has an ``__init__.py``); its modules are the ``.py`` files
    directly in it, ``__init__.py`` included.
room
    The folder that holds a module (``tcpabr_model.sim.kernels._x`` is in room
    ``tcpabr_model.sim.kernels``); a module directly under the root folder is a room of its
    own (``tcpabr_model.units``), and the root ``__init__.py`` is room ``tcpabr_model``.
import
    Every ``import`` and ``from ... import`` statement anywhere in a module (inside
    functions, ``if TYPE_CHECKING:`` and ``try:`` blocks too), relative ones resolved to
    absolute names.  ``from pkg import name`` imports the submodule ``pkg.name`` when there
    is one, else ``pkg`` itself.  Only imports of modules of the package are kept; a
    ``from`` import of a module that does not exist is listed as unresolved.  Imports made
    at run time by ``importlib.import_module`` (the lazy PEP 562 attributes of some
    ``__init__.py`` and the CLI's command table) are not seen.

Violations
----------
* an import cycle: a strongly connected component of more than one module;
* an upward import: a module imports a module of a higher layer (see below);
* a module of more than :data:`MAX_MODULE_LINES` lines;
* a folder of more than :data:`MAX_FOLDER_MODULES` modules;
* a key of :data:`LAYERS` (under the package's name) that names no module.

Layers
------
:data:`LAYERS` maps a module-name prefix to a layer number, lower = lower layer.  A
module's layer is that of the **longest matching prefix**, where a prefix matches the
module of that name and every module below it (``tcpabr_model.sim`` matches
``tcpabr_model.sim`` and ``tcpabr_model.sim.kernels.general``, not ``tcpabr_model.simple``).
The package name itself is the default: a module that no longer prefix matches is in its
layer (0), so it may import only layer 0 until it is declared.  A module may import
modules of its own layer or lower ones; cycles within a layer are caught as cycles.  The
top-level layers are 10 apart: to layer the inside of a folder, add longer prefixes with
numbers in between, e.g. under ``"tcpabr_model.sim": 20``::

    "tcpabr_model.sim.arrays": 12,    # the array layouts, below everything else in sim
    "tcpabr_model.sim.tcp": 14,
    "tcpabr_model.sim.kernels": 16,   # the kernels, below the driver (the rest of sim: 20)

This module uses the standard library only (``ast``).
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LAYERS", "MAX_FOLDER_MODULES", "MAX_MODULE_LINES", "ImportGraph", "ModuleInfo", "build_graph",
           "crowded_folders", "cycles", "layer_of", "long_modules", "main", "render", "room_imports", "room_of",
           "stale_layers", "upward_imports", "violations"]

#: Module-name prefix -> layer (lower = lower layer); the longest matching prefix wins.
#: The single place where the package's layer order is declared.
LAYERS = {
    "tcpabr_model": 0,                 # the default, and the root __init__ (version, numba cache stamp)
    # (layers are 10 apart so that a folder can be layered inside without renumbering)
    # 0: leaves that every room may use
    "tcpabr_model._validate": 0,
    "tcpabr_model.errors": 0,
    "tcpabr_model.units": 0,
    "tcpabr_model.stats": 0,
    "tcpabr_model.runtime": 0,           # worker pools, output paths
    "tcpabr_model._results": 0,
    "tcpabr_model._numba_cache": 0,
    "tcpabr_model._layout_map": 0,
    # 10: closed forms and capacity models
    "tcpabr_model.closed_forms": 10,
    "tcpabr_model.capacity": 10,
    # 20: the two models: Markov renewal analysis, cell-level simulator
    "tcpabr_model.markov": 20,
    "tcpabr_model.sim": 20,           # the descriptions, the driver, the results
    # inside the simulator, one way: arrays <- tcp, switch, abr <- kernels <- the top <- presets
    "tcpabr_model.sim.arrays": 14,
    "tcpabr_model.sim.tcp": 15,
    "tcpabr_model.sim.switch": 15,
    "tcpabr_model.sim.abr": 15,
    "tcpabr_model.sim.kernels": 16,
    "tcpabr_model.sim.presets": 22,
    # the delta calibration experiment of Sec. IV runs the Markov engine (feedback='constant'):
    # it sits above the models, not with the closed forms it calibrates
    "tcpabr_model.closed_forms.calibration": 25,
    # 30: what runs the models
    "tcpabr_model.sweep": 30,
    "tcpabr_model.trace_study": 30,
    "tcpabr_model.design": 30,         # the feedback designer runs the simulator (issue 26)
    # 40: what compares or draws them
    "tcpabr_model.validity": 40,
    "tcpabr_model.plot": 40,
    # 50: the studies
    "tcpabr_model.reproduce": 50,
    "tcpabr_model.validation": 50,
    # 60: the command line: the tcpabr command and every room's cli module (the top of its
    # room; they share the output helpers of tcpabr_model.cli)
    "tcpabr_model.cli": 60,
    "tcpabr_model.__main__": 60,
    "tcpabr_model.capacity.cli": 60,
    "tcpabr_model.design.cli": 60,
    "tcpabr_model.closed_forms.cli": 60,
    "tcpabr_model.markov.cli": 60,
    "tcpabr_model.plot.cli": 60,
    "tcpabr_model.reproduce.cli": 60,
    "tcpabr_model.sim.cli": 60,
    "tcpabr_model.sim.presets.cli": 60,
    "tcpabr_model.sweep.cli": 60,
    "tcpabr_model.validation.cli": 60,
    "tcpabr_model.validation.__main__": 60,
}

#: A module longer than this many lines is a violation.
MAX_MODULE_LINES = 600
#: A folder with more than this many modules (``.py`` files, ``__init__.py`` included) is a violation.
MAX_FOLDER_MODULES = 12


@dataclass(frozen=True)
class ModuleInfo:
    """One module: dotted name, file, whether it is a folder's ``__init__.py``, lines, docstring."""

    name: str
    path: Path
    is_package: bool
    lines: int
    doc: str          # first line of the module docstring ('' if none)


@dataclass(frozen=True)
class ImportGraph:
    """Modules of a package and the imports between them.

    Attributes
    ----------
    package : str
        Name of the root package (``tcpabr_model``).
    root : pathlib.Path
        Its folder.
    modules : dict
        ``name -> ModuleInfo``, sorted by name.
    edges : dict
        ``importer -> {imported: (line numbers, ...)}`` (modules of the package only, no
        self-imports).
    unresolved : list
        ``(importer, line, name)`` of ``from`` imports of package modules that do not exist.
    """

    package: str
    root: Path
    modules: dict
    edges: dict
    unresolved: list = field(default_factory=list)

    def folders(self) -> list:
        """Names of the package folders (the root included), sorted."""
        return sorted(m.name for m in self.modules.values() if m.is_package)


def _module_name(package: str, root: Path, path: Path) -> tuple:
    parts = list(path.relative_to(root).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join([package, *parts]), is_package


def _first_doc_line(tree: ast.Module) -> str:
    doc = ast.get_docstring(tree) or ""
    for line in doc.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _python_files(root: Path):
    """``.py`` files of the package folders under ``root`` (folders with an ``__init__.py``)."""
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel_dirs = path.relative_to(root).parts[:-1]
        if all((root.joinpath(*rel_dirs[:i]) / "__init__.py").is_file() for i in range(len(rel_dirs) + 1)):
            yield path


def _resolve(name: str, modules: dict) -> str | None:
    """The longest prefix of ``name`` that is a module of the package (``import a.b.c``)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        cand = ".".join(parts[:i])
        if cand in modules:
            return cand
    return None


def _imports(info: ModuleInfo, tree: ast.Module, package: str, modules: dict):
    """``(imported module, line)`` of every import statement of one module, and the
    unresolved ``(line, name)``."""
    found, unresolved = [], []
    pkg = info.name if info.is_package else info.name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name, modules)
                if target is not None:
                    found.append((target, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = pkg.split(".")
                if node.level - 1 >= len(base_parts):
                    unresolved.append((node.lineno, "." * node.level + (node.module or "")))
                    continue
                base = ".".join(base_parts[:len(base_parts) - (node.level - 1)])
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            if source != package and not source.startswith(package + "."):
                continue
            if source not in modules:
                unresolved.append((node.lineno, source))
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                found.append((sub if sub in modules else source, node.lineno))
    return found, unresolved


def build_graph(root=None, package: str | None = None) -> ImportGraph:
    """Read every module of a package and build its import graph.

    Parameters
    ----------
    root : str or path, optional
        The package folder (the one with the root ``__init__.py``); default: this package.
    package : str, optional
        Its import name; default: the folder's name.

    Returns
    -------
    ImportGraph
    """
    root = Path(__file__).resolve().parent if root is None else Path(root).resolve()
    package = package or root.name
    modules, trees = {}, {}
    for path in _python_files(root):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
        name, is_package = _module_name(package, root, path)
        modules[name] = ModuleInfo(name, path, is_package, len(text.splitlines()), _first_doc_line(tree))
        trees[name] = tree
    modules = dict(sorted(modules.items()))
    edges, unresolved = {}, []
    for name, info in modules.items():
        found, bad = _imports(info, trees[name], package, modules)
        out: dict = {}
        for target, line in found:
            if target != name:
                out.setdefault(target, []).append(line)
        edges[name] = {t: tuple(sorted(lines)) for t, lines in sorted(out.items())}
        unresolved.extend((name, line, what) for line, what in bad)
    return ImportGraph(package, root, modules, edges, unresolved)


def cycles(graph: ImportGraph) -> list:
    """Strongly connected components of more than one module (each a sorted list), sorted.

    Tarjan's algorithm, iterative (no recursion limit on a long import chain).
    """
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in graph.modules:
        if start in index:
            continue
        work = [(start, iter(graph.edges.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.edges.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def layer_of(name: str, layers=None):
    """Layer of a module: the value of the longest prefix of ``layers`` that matches it
    (the name itself or a dotted parent of it); None if none matches."""
    layers = LAYERS if layers is None else layers
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        key = ".".join(parts[:i])
        if key in layers:
            return layers[key]
    return None


def upward_imports(graph: ImportGraph, layers=None) -> list:
    """``(importer, its layer, imported, its layer, lines)`` for every import of a higher layer;
    modules that no prefix matches are not checked."""
    out = []
    for src, targets in graph.edges.items():
        ls = layer_of(src, layers)
        for dst, lines in targets.items():
            ld = layer_of(dst, layers)
            if ls is not None and ld is not None and ld > ls:
                out.append((src, ls, dst, ld, lines))
    return out


def long_modules(graph: ImportGraph, limit: int = MAX_MODULE_LINES) -> list:
    """``(module, lines)`` of the modules over ``limit`` lines."""
    return [(m.name, m.lines) for m in graph.modules.values() if m.lines > limit]


def _folder_members(graph: ImportGraph) -> dict:
    """``folder -> [modules directly in it]`` (its ``__init__`` first)."""
    members = {f: [f] for f in graph.folders()}
    for m in graph.modules.values():
        if not m.is_package:
            members[m.name.rpartition(".")[0]].append(m.name)
    return members


def crowded_folders(graph: ImportGraph, limit: int = MAX_FOLDER_MODULES) -> list:
    """``(folder, number of modules)`` of the folders with more than ``limit`` modules."""
    return [(f, len(ms)) for f, ms in _folder_members(graph).items() if len(ms) > limit]


def room_of(graph: ImportGraph, name: str) -> str:
    """The room of a module: its folder, or itself for a module directly under the root."""
    info = graph.modules[name]
    if info.is_package:
        return name
    parent = name.rpartition(".")[0]
    return name if parent == graph.package else parent


def room_imports(graph: ImportGraph) -> dict:
    """``room -> sorted rooms it imports`` (itself excluded), every room listed."""
    out = {room_of(graph, m): set() for m in graph.modules}
    for src, targets in graph.edges.items():
        rs = room_of(graph, src)
        for dst in targets:
            rd = room_of(graph, dst)
            if rd != rs:
                out[rs].add(rd)
    return {r: sorted(v) for r, v in sorted(out.items())}


def violations(graph: ImportGraph, layers=None) -> list:
    """Every violation as one line of text (empty list: none)."""
    short = _shortener(graph)
    out = []
    for comp in cycles(graph):
        inside = [f"{short(a)} -> {short(b)} ({_where(graph.edges[a][b])})"
                  for a in comp for b in graph.edges[a] if b in comp]
        out.append(f"import cycle among {', '.join(short(m) for m in comp)}: {'; '.join(inside)}")
    for src, ls, dst, ld, lines in upward_imports(graph, layers):
        out.append(f"upward import: {short(src)} (layer {ls}) imports {short(dst)} (layer {ld}), {_where(lines)}")
    out += [f"module over {MAX_MODULE_LINES} lines: {short(n)} ({k} lines)" for n, k in long_modules(graph)]
    out += [f"folder over {MAX_FOLDER_MODULES} modules: {short(f) if f != graph.package else f}/ ({k} modules)"
            for f, k in crowded_folders(graph)]
    out += [f"layer declared for no module: {key!r}" for key in stale_layers(graph, layers)]
    return out


def stale_layers(graph: ImportGraph, layers=None) -> list:
    """Keys of ``layers`` under the package that name no module (a renamed or removed room
    whose declaration would silently stop applying)."""
    layers = LAYERS if layers is None else layers
    mine = [k for k in layers if k == graph.package or k.startswith(graph.package + ".")]
    return sorted(k for k in mine if k not in graph.modules)


def _shortener(graph: ImportGraph):
    """Module names without the package's prefix (``tcpabr_model.sim.cli`` -> ``sim.cli``)."""
    prefix = graph.package + "."
    return lambda name: name.removeprefix(prefix)


def _where(lines) -> str:
    lines = sorted(set(lines))
    return ("line " if len(lines) == 1 else "lines ") + ", ".join(str(n) for n in lines)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def render(graph: ImportGraph, layers=None, width: int = 110) -> str:
    """The one-page map: folders, modules, room imports, violations."""
    short = _shortener(graph)
    members = _folder_members(graph)
    n_lines = sum(m.lines for m in graph.modules.values())
    head = (f"{graph.package}: {len(graph.modules)} modules, {n_lines} lines, {len(members)} folders "
            f"(limits: {MAX_MODULE_LINES} lines a module, {MAX_FOLDER_MODULES} modules a folder, '!' over)")
    lines = [head, ""]
    for folder, names in members.items():
        info = graph.modules[folder]
        label = graph.package if folder == graph.package else graph.package + "/" + short(folder).replace(".", "/")
        flag = " !" if len(names) > MAX_FOLDER_MODULES else ""
        lines.append(_clip(f"{label}/  ({len(names)} modules{flag})  {info.doc}", width))
        for name in names:
            m = graph.modules[name]
            fname = m.path.name
            flag = " !" if m.lines > MAX_MODULE_LINES else ""
            lines.append(_clip(f"  {fname:24s} {m.lines:5d}{flag:2s} {m.doc}", width))
        lines.append("")
    lines += ["Rooms (layer: longest matching prefix in tcpabr_model._layout_map.LAYERS) and the rooms they import:"]
    for room, targets in room_imports(graph).items():
        layer = layer_of(room, layers)
        tag = f"{short(room)} ({layer if layer is not None else '-'})"
        body = ", ".join(short(t) for t in targets) or "-"
        lines.append(_clip(f"  {tag:26s} -> {body}", 400))
    if graph.unresolved:
        lines += ["", "Unresolved imports (no such module):"]
        lines += [f"  {short(src)}:{line}: {what}" for src, line, what in graph.unresolved]
    found = violations(graph, layers)
    lines += ["", f"Violations: {len(found)}" + ("" if found else " (none)")]
    lines += [f"  {v}" for v in found]
    return "\n".join(lines)


def main(argv=None) -> int:
    """Print the map of the package (or of ``--root``); 1 if there is any violation."""
    p = argparse.ArgumentParser(prog="python -m tcpabr_model._layout_map", description=__doc__.splitlines()[0])
    p.add_argument("--root", default=None, help="package folder to map (default: tcpabr_model)")
    args = p.parse_args(argv)
    graph = build_graph(args.root)
    print(render(graph))
    return 1 if violations(graph) else 0


if __name__ == "__main__":
    sys.exit(main())
