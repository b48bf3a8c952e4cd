"""mkdocs hook: bring the notebooks, the API reference and the reproduction report into the site.

Nothing here is hand-maintained per page, so a new notebook or a new public package
appears in the site without editing ``mkdocs.yml``:

* every ``notebooks/*.ipynb`` becomes ``notebooks/<name>.ipynb`` of the site (rendered by
  mkdocs-jupyter from its stored outputs, never executed at build time) and an entry of
  the "Notebooks" section of the navigation;
* every public subpackage or module of ``tcpabr_model`` (no leading underscore, not the
  command-line modules) gets an API page ``api/<name>.md``: its docstring, then one
  ``:::`` block per name of its ``__all__``, each pointed at the module that defines it
  (several packages hand their names on lazily, PEP 562, which mkdocstrings cannot follow
  from the package), and an entry of the "API reference" section. After the build every
  such name must have its anchor in the built page, else the build fails (issue 24: six
  pages once showed only a package docstring while ``mkdocs build --strict`` passed);
* ``REPORT.md`` of ``tcpabr reproduce --quick`` with its figures becomes
  ``reproduction/REPORT.md``. It is read from ``$TCPABR_REPORT_DIR``, else
  ``out/reproduce-ci`` (where ``.ci/run`` writes it), else ``out/reproduce``. When there is
  none (a local build before any reproduction), the page says how to make it and the build
  still succeeds: the report is an output of the study, not a source of the site.

The docstrings' Sphinx roles (``:func:`name```) have no meaning in Markdown; the rendered
pages show the name as code without the role prefix. A ``:math:`...``` role is rendered as
MathML (``latex2mathml``, in the ``docs`` extra), which browsers show natively: no script and
no network. An expression it cannot convert stays as its LaTeX in code, and the build says so.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tcpabr_model"
NOT_API = {"cli", "__main__"}  # command-line entry points: documented by `tcpabr --help`
REPORT_DIRS = ("out/reproduce-ci", "out/reproduce")
NOTEBOOKS_SECTION, API_SECTION = "Notebooks", "API reference"
log = logging.getLogger("mkdocs.hooks.tcpabr")
SPHINX_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const|math):(?=<code>)")
MATH_ROLE = re.compile(r":math:<code>(.*?)</code>", re.S)


def notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def api_modules() -> list[str]:
    names = [p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
    names += [p.stem for p in PACKAGE.glob("*.py")]
    return sorted(n for n in names if not n.startswith("_") and n not in NOT_API)


@functools.lru_cache(maxsize=None)
def _module_sources() -> tuple:
    """(dotted name, module, source) of every importable module of the package but the CLIs."""
    import importlib
    import pkgutil

    import tcpabr_model

    out = [("tcpabr_model", tcpabr_model, (PACKAGE / "__init__.py").read_text())]
    for info in pkgutil.walk_packages(tcpabr_model.__path__, "tcpabr_model."):
        if info.name.endswith(("__main__", ".cli")):
            continue
        try:
            m = importlib.import_module(info.name)
            out.append((info.name, m, Path(m.__file__).read_text()))
        except Exception:  # noqa: BLE001 - a module that cannot be imported here is skipped
            continue
    return tuple(out)


def _defining_module(pkg, name: str, obj) -> str | None:
    """The dotted path that defines ``name`` of ``pkg``: ``obj.__module__`` for functions and
    classes, else the module that assigns it at module level (``pkg``'s own modules first; a
    name may be re-exported from another room: closed_forms.CELL_BYTES is units.CELL_BYTES);
    None for a value built at import time (reproduce.SPECS)."""
    mod = getattr(obj, "__module__", None)
    if mod and hasattr(obj, "__qualname__") and mod.startswith("tcpabr_model"):
        return f"{mod}.{obj.__qualname__}"
    pattern = re.compile(rf"^{re.escape(name)}\s*(?::[^=\n]*)?=", re.M)
    own = [x for x in _module_sources() if x[0] == pkg.__name__ or x[0].startswith(pkg.__name__ + ".")]
    for cand, m, src in own + [x for x in _module_sources() if x not in own]:
        if vars(m).get(name) is obj and pattern.search(src):
            return f"{cand}.{name}"
    return None


@functools.lru_cache(maxsize=None)
def api_entries(mod: str) -> tuple:
    """``(name, path, kind, anchor)`` for every name of ``tcpabr_model.<mod>.__all__``: ``kind``
    is ``'render'`` (its docstring on this page, anchor = its path), ``'link'`` (documented on
    the page of the room that defines it) or ``'summary'`` (built at import time: a line)."""
    import importlib

    pkg = importlib.import_module(f"tcpabr_model.{mod}")
    pages = set(api_modules())
    out = []
    for name in getattr(pkg, "__all__", []):
        path = _defining_module(pkg, name, getattr(pkg, name))
        owner = path.split(".")[1] if path else mod
        if path is None:
            kind = "summary"
        elif owner != mod and owner in pages:
            kind = "link"
        else:
            kind = "render"
        out.append((name, path, kind, path if kind == "render" else f"tcpabr_model.{mod}.{name}"))
    return tuple(out)


def api_page(mod: str) -> str:
    import importlib

    pkg = importlib.import_module(f"tcpabr_model.{mod}")
    lines = [f"# `tcpabr_model.{mod}`", "", f"::: tcpabr_model.{mod}", "    options:", "      members: false", ""]
    for name, path, kind, anchor in api_entries(mod):
        if kind == "render":
            lines += [f"::: {path}", "    options:", "      show_root_heading: true",
                      "      show_root_full_path: false", "      heading_level: 2", ""]
            continue
        lines += [f'<a id="{anchor}"></a>', "", f"## `{name}`", ""]
        if kind == "link":
            owner = path.split(".")[1]
            lines += [f"The same object as [`{path}`]({owner}.md#{path}) (re-exported here).", ""]
        else:
            obj = getattr(pkg, name)
            if isinstance(obj, (str, bytes, int, float, bool)):    # a constant: its value says what it is
                lines += [f"`{type(obj).__name__}` constant: `{obj!r}`.", ""]
            else:
                lines += [f"`{type(obj).__name__}` of {len(obj)} items, built when the package is imported; "
                          "the package description above says what it holds." if hasattr(obj, "__len__")
                          else f"`{type(obj).__name__}`; the package description above says what it is.", ""]
    return "\n".join(lines)


def report_dir() -> Path | None:
    candidates = [os.environ["TCPABR_REPORT_DIR"]] if os.environ.get("TCPABR_REPORT_DIR") else list(REPORT_DIRS)
    for d in candidates:
        path = ROOT / d
        if (path / "REPORT.md").is_file():
            return path
    return None


def _fill_section(nav: list, title: str, entries: list) -> None:
    for item in nav:
        if isinstance(item, dict) and title in item:
            item[title] = entries
            return
    nav.append({title: entries})


def on_config(config):
    nav = config.nav
    if nav is not None:
        _fill_section(nav, NOTEBOOKS_SECTION, [f"notebooks/{p.name}" for p in notebooks()])
        _fill_section(nav, API_SECTION, [{f"tcpabr_model.{m}": f"api/{m}.md"} for m in api_modules()])
    return config


@event_priority(100)  # before mkdocs-jupyter turns .ipynb files into pages
def on_files(files: Files, config) -> Files:
    for nb in notebooks():  # a real source folder (not File.generated): mkdocs-jupyter's
        # wrapper recomputes abs_src_path from src_dir and would lose a generated file's
        files.append(File(f"notebooks/{nb.name}", src_dir=str(ROOT), dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    for mod in api_modules():
        files.append(File.generated(config, f"api/{mod}.md", content=api_page(mod)))
    found = report_dir()
    if found is None:
        tried = os.environ.get("TCPABR_REPORT_DIR") or " or ".join(REPORT_DIRS)
        log.info("no REPORT.md in %s: the site's reproduction page says how to make one", tried)
        page = ("# Reproduction report\n\nThis build found no report. Make it with\n\n"
                "    tcpabr reproduce --quick --out out/reproduce-ci\n\n"
                "and rebuild the site (`mkdocs build`); `TCPABR_REPORT_DIR=DIR` points the build at "
                "another output folder of `tcpabr reproduce`. See [Reproducing Figs. 8-22](../reproduce.md).\n")
        files.append(File.generated(config, "reproduction/REPORT.md", content=page))
    else:
        log.info("reproduction report from %s", found)
        files.append(File.generated(config, "reproduction/REPORT.md", abs_src_path=str(found / "REPORT.md")))
        for png in sorted(found.glob("*.png")):
            files.append(File.generated(config, f"reproduction/{png.name}", abs_src_path=str(png)))
    return files


def _mathml(match: re.Match) -> str:
    """``:math:<code>TEX</code>`` as inline MathML; the code itself where the TeX does not convert."""
    import html as html_lib

    tex = html_lib.unescape(match.group(1))
    try:
        from latex2mathml.converter import convert
        return convert(tex)
    except Exception as exc:  # noqa: BLE001 - any failure keeps the TeX readable as code
        log.info("math kept as LaTeX (%s): %s", type(exc).__name__, tex)
        return match.group(0)


def on_page_content(html: str, page, config, files) -> str:
    return SPHINX_ROLE.sub("", MATH_ROLE.sub(_mathml, html))


def on_post_build(config) -> None:
    """Fail the build when a public name (``__all__``) has no anchor on its API page."""
    site = Path(config.site_dir)
    missing = []
    for mod in api_modules():
        page = site / "api" / mod / "index.html"
        if not page.is_file():
            page = site / "api" / f"{mod}.html"
        html = page.read_text() if page.is_file() else ""
        for name, path, _, anchor in api_entries(mod):
            if f'id="{anchor}"' not in html:
                missing.append(f"tcpabr_model.{mod}.{name} ({path})")
    if missing:
        raise RuntimeError(f"{len(missing)} public names are missing from the API reference: " + ", ".join(missing))
