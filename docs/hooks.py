"""mkdocs hook: bring the notebooks, the API reference and the reproduction report into the site.

Nothing here is hand-maintained per page, so a new notebook or a new public package
appears in the site without editing ``mkdocs.yml``:

* every ``notebooks/*.ipynb`` becomes ``notebooks/<name>.ipynb`` of the site (rendered by
  mkdocs-jupyter from its stored outputs, never executed at build time) and an entry of
  the "Notebooks" section of the navigation;
* every public subpackage or module of ``tcpabr_model`` (no leading underscore, not the
  command-line modules) gets an API page ``api/<name>.md`` holding ``::: tcpabr_model.<name>``
  (mkdocstrings, numpydoc style) and an entry of the "API reference" section;
* ``REPORT.md`` of ``tcpabr reproduce --quick`` with its figures becomes
  ``reproduction/REPORT.md``. It is read from ``$TCPABR_REPORT_DIR``, else
  ``out/reproduce-ci`` (where ``.ci/run`` writes it), else ``out/reproduce``. When there is
  none (a local build before any reproduction), the page says how to make it and the build
  still succeeds: the report is an output of the study, not a source of the site.

The docstrings' Sphinx roles (``:func:`name```) have no meaning in Markdown; the rendered
pages show the name as code without the role prefix.
"""

from __future__ import annotations

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
SPHINX_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):(?=<code>)")


def notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def api_modules() -> list[str]:
    names = [p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
    names += [p.stem for p in PACKAGE.glob("*.py")]
    return sorted(n for n in names if not n.startswith("_") and n not in NOT_API)


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
        page = f"# `tcpabr_model.{mod}`\n\n::: tcpabr_model.{mod}\n"
        files.append(File.generated(config, f"api/{mod}.md", content=page))
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


def on_page_content(html: str, page, config, files) -> str:
    return SPHINX_ROLE.sub("", html)
