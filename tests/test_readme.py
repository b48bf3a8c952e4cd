"""Every code block of README.md is executed, so the README cannot go stale.

How blocks are read (fenced blocks only; each becomes one test, named by its line):

* ```` ```python ```` -- run as a script in a fresh interpreter. If it holds ``>>>`` lines
  it is a session instead: each statement runs as at the prompt and the lines after it
  are its expected output, compared as below.
* a block whose lines start with ``$ `` -- a CLI transcript: each command runs in bash,
  the lines after it (up to the next ``$``) are its expected output. A command with no
  lines after it must only succeed (exit status 0).
* ```` ```sh ```` -- commands that must succeed. A leading ``python3 -m pip install ...
  &&`` is the reader's setup step and is not run (the test runs in the installed
  environment).
* A marker in an HTML comment on the line before a block changes that block:
  ``<!-- readme-test: skip REASON -->`` (not run; keep rare and give the reason),
  ``<!-- readme-test: slow -->`` (run only with ``pytest -m slow``),
  ``<!-- readme-test: exit N -->`` (a transcript of a refusal: each command must exit with
  status N, and its expected lines are compared with what it printed on stdout and stderr),
  ``<!-- readme-test: file NAME -->`` (the block is the content of file NAME, written
  before any block runs), ``<!-- readme-test: creates PATH ... -->`` (the files the block
  says it writes must exist afterwards). Any other fenced block fails the test until it
  is marked.

Expected output: a line ``...`` stands for any number of lines, ``...`` inside a line for
any text; whitespace runs compare equal. Numbers are compared with a tolerance: integers
exactly, a decimal number within one unit of the last digit the README prints (0.5518
accepts 0.5517..0.5519: the rounding of the last digit may differ across platforms).
When a number moved, the failure names the README line, the block, the line of output
and each number (README value, program value), and prints the program's whole output,
ready to paste into the README.

Commands run in a scratch folder (so ``out/`` goes there) that links ``analytics/`` and
``validation/`` of this tree; ``tcpabr``, ``python`` and ``python3`` run this tree's code
with this interpreter.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MARKER = re.compile(r"^<!--\s*readme-test:\s*(\w+)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(```+)\s*([\w+-]*)\s*$")
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")
SETUP = re.compile(r"^python3? -m pip install [^&]*&&\s*")
LINKED = ("analytics", "validation")
TIMEOUT = 900  # seconds per block; the slowest quick block (the study) takes about 1 min


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    section: str
    lang: str
    text: str
    marks: dict[str, str] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        if "file" in self.marks:
            return "file"
        if self.lang == "python":
            return "session" if any(ln.startswith(">>> ") or ln == ">>>" for ln in self.text.splitlines()) else "script"
        if any(ln.startswith("$ ") for ln in self.text.splitlines()):
            return "transcript"
        if self.lang in ("sh", "bash"):
            return "commands"
        return "unknown"

    @property
    def where(self) -> str:
        first = self.text.strip().splitlines()[0] if self.text.strip() else ""
        return f'README.md line {self.line}, section "{self.section}", block {first[:70]!r}'


def parse_readme(text: str) -> list[Block]:
    """The fenced code blocks of ``text`` with their section and markers."""
    blocks, section, marks, lines = [], "", {}, text.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("#") and not ln.startswith("#!"):
            section = ln.lstrip("#").strip()
        m = MARKER.match(ln)
        if m:
            marks[m.group(1)] = m.group(2)
        fence = FENCE.match(ln)
        if fence:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(fence.group(1))), None)
            if end is None:
                raise ValueError(f"README.md line {i + 1}: fenced block never closed")
            blocks.append(Block(i + 1, section, fence.group(2), "\n".join(lines[i + 1:end]) + "\n", marks))
            marks, i = {}, end
        elif ln.strip() and not m:
            marks = {}  # a marker applies to the block right after it
        i += 1
    return blocks


BLOCKS = parse_readme(README.read_text(encoding="utf-8"))


# ---- expected-output matching -----------------------------------------------------------

def _skeleton(line: str) -> str:
    return " ".join(NUMBER.sub("#", line).split())


def _line_pattern(expected: str) -> re.Pattern:
    parts = [re.escape(p) for p in _skeleton(expected).split("...")]
    return re.compile("^" + ".*".join(p.replace(r"\ ", r"\s+").replace("\\#", "#") for p in parts) + "$")


def _tolerance(token: str) -> float:
    mant = re.split("[eE]", token)
    if "." not in mant[0]:
        return 0.0 if len(mant) == 1 else 10.0 ** int(mant[1])
    unit = 10.0 ** -len(mant[0].split(".")[1])
    return unit * (10.0 ** int(mant[1]) if len(mant) == 2 else 1.0) * (1 + 1e-9)


def _numbers(line: str) -> list[str]:
    return NUMBER.findall(line)


def _align(expected: list[str], actual: list[str]) -> list[tuple[int, int]] | None:
    """Pairs (expected index, actual index) matching the skeletons, ``...`` lines as gaps."""
    memo: dict[tuple[int, int], list | None] = {}

    def go(e: int, a: int):
        if (e, a) in memo:
            return memo[(e, a)]
        if e == len(expected):
            res = [] if a == len(actual) else None
        elif expected[e].strip() == "...":
            res = next((r for k in range(a, len(actual) + 1) if (r := go(e + 1, k)) is not None), None)
        elif a < len(actual) and _line_pattern(expected[e]).match(_skeleton(actual[a])):
            rest = go(e + 1, a + 1)
            res = None if rest is None else [(e, a)] + rest
        else:
            res = None
        memo[(e, a)] = res
        return res

    return go(0, 0)


def compare(expected: list[str], actual: list[str]) -> list[str]:
    """Differences between README lines and program lines; empty when they agree."""
    expected, actual = [ln.rstrip() for ln in expected], [ln.rstrip() for ln in actual]
    for lines in (expected, actual):
        while lines and not lines[-1]:
            lines.pop()
    pairs = _align(expected, actual)
    if pairs is None:
        return ["the output does not have the README's lines (text differs, or lines were added or "
                "removed where the README has no '...')"]
    problems = []
    for e, a in pairs:
        exp, act = expected[e], actual[a]
        if "..." in exp:  # numbers inside an elided part cannot be paired: compare the text only
            continue
        moved = [f"{x} -> {y} (tolerance {_tolerance(x):.3g})" for x, y in zip(_numbers(exp), _numbers(act))
                 if abs(float(x) - float(y)) > _tolerance(x)]
        if moved:
            problems.append(f"output line {a + 1} {act.strip()!r}: README number -> program number: " + "; ".join(moved))
    return problems


# ---- running blocks ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """Scratch folder with this tree's scripts linked and shims for tcpabr / python."""
    wd = tmp_path_factory.mktemp("readme")
    for name in LINKED:
        (wd / name).symlink_to(ROOT / name, target_is_directory=True)
    bin_dir = wd / ".bin"
    bin_dir.mkdir()
    shims = {"tcpabr": f'exec {shlex.quote(sys.executable)} -m tcpabr_model "$@"\n',
             "python": f'exec {shlex.quote(sys.executable)} "$@"\n',
             "python3": f'exec {shlex.quote(sys.executable)} "$@"\n'}
    for name, body in shims.items():
        path = bin_dir / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
    for b in BLOCKS:
        if b.kind == "file":
            (wd / b.marks["file"]).write_text(b.text)
    return wd


def _env(wd: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(wd / ".bin") + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["MPLBACKEND"] = "Agg"
    env["COLUMNS"] = "200"
    return env


def _run(cmd: list[str] | str, wd: Path, block: Block, *, shell: bool = False, status: int = 0) -> str:
    """Run ``cmd``; it must exit with ``status``.  Returns stdout (and stderr after it when
    a non-zero status is expected: a refusal prints its one line there)."""
    proc = subprocess.run(cmd if not shell else ["bash", "-c", cmd], cwd=wd, env=_env(wd), capture_output=True,
                          text=True, timeout=TIMEOUT)
    if proc.returncode != status:
        pytest.fail(f"{block.where}: {cmd if shell else 'the block'} exited with status {proc.returncode} "
                    f"(the README expects {status})\n"
                    f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}", pytrace=False)
    return proc.stdout if status == 0 else proc.stdout + proc.stderr


def _commands(text: str, prompt: str = "") -> list[tuple[str, list[str]]]:
    """(command, expected output lines) pairs; backslash continuations joined."""
    out: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if prompt and not ln.startswith(prompt):
            if not out:
                raise ValueError(f"output line {ln!r} before any command")
            out[-1][1].append(ln)
            i += 1
            continue
        cmd = ln[len(prompt):]
        while cmd.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd.rstrip()[:-1] + " " + lines[i].strip()
        if cmd.strip():
            out.append((cmd.strip(), []))
        i += 1
    return out


def _check(block: Block, what: str, expected: list[str], actual: str) -> None:
    if not expected:
        return
    problems = compare(expected, actual.splitlines())
    if problems:
        pytest.fail(f"{block.where}: {what}\n  " + "\n  ".join(problems)
                    + "\n--- README expects\n" + "\n".join(expected)
                    + "\n--- the program prints (paste into README.md if the change is intended)\n" + actual,
                    pytrace=False)


def _session_script(statements: list[str]) -> str:
    body = ["import sys", f"_statements = {statements!r}", "_ns = {'__name__': '__main__'}",
            "for _i, _s in enumerate(_statements):",
            "    print(f'\\x00stmt {_i}', flush=True)",
            "    exec(compile(_s, f'<README statement {_i}>', 'single'), _ns)",
            "    sys.stdout.flush()"]
    return "\n".join(body) + "\n"


def _session(text: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for ln in text.splitlines():
        if ln.startswith(">>> ") or ln == ">>>":
            out.append((ln[4:], []))
        elif ln.startswith("... ") or ln == "...":
            if out and not out[-1][1]:
                out[-1] = (out[-1][0] + "\n" + ln[4:], [])
            elif out:
                out[-1][1].append(ln)
        elif out:
            out[-1][1].append(ln)
        elif ln.strip():
            out.append((ln, []))  # plain code before the first prompt (imports)
    return [(src + "\n", exp) for src, exp in out]


def _param(b: Block):
    marks = [pytest.mark.slow] if "slow" in b.marks else []
    if "skip" in b.marks:
        marks.append(pytest.mark.skip(reason=f"README marks it: {b.marks['skip']}"))
    name = re.sub(r"[^a-z0-9]+", "-", b.section.lower()).strip("-")[:40]
    return pytest.param(b, marks=marks, id=f"L{b.line}-{name}-{b.kind}")


def test_readme_has_blocks():
    kinds = {b.kind for b in BLOCKS}
    assert {"script", "transcript", "commands"} <= kinds, kinds


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS if b.kind != "file"])
def test_readme_block(block: Block, workdir: Path):
    kind = block.kind
    if kind == "unknown":
        pytest.fail(f"{block.where}: not a python, `$` transcript or sh block: run it, or mark it "
                    "<!-- readme-test: skip REASON --> / file NAME (see tests/test_readme.py)", pytrace=False)
    if kind == "script":
        script = workdir / f"readme_L{block.line}.py"
        script.write_text(textwrap.dedent(block.text))
        _run([sys.executable, str(script)], workdir, block)
    elif kind == "session":
        steps = _session(block.text)
        script = workdir / f"readme_L{block.line}.py"
        script.write_text(_session_script([s for s, _ in steps]))
        out = _run([sys.executable, str(script)], workdir, block)
        chunks = out.split("\x00stmt ")[1:]
        for (src, expected), chunk in zip(steps, chunks):
            _check(block, f"statement {src.strip()!r}", expected, chunk.split("\n", 1)[1] if "\n" in chunk else "")
    elif kind == "transcript":
        status = int(block.marks.get("exit", "0") or 0)
        for cmd, expected in _commands(block.text, prompt="$ "):
            _check(block, f"command `{cmd}`", expected, _run(cmd, workdir, block, shell=True, status=status))
    elif kind == "commands":
        for cmd, _ in _commands(block.text):
            if cmd.startswith("#"):
                continue
            _run(SETUP.sub("", cmd), workdir, block, shell=True)
    for path in block.marks.get("creates", "").split():
        assert (workdir / path).is_file(), f"{block.where}: the README says it writes {path}; it is not there"


# ---- the matcher itself ------------------------------------------------------------------

def test_compare_accepts_last_digit_and_ellipsis():
    exp = ["efficiency      0.5518 +/- 0.0032 (95% CI; ceiling 0.8491 over ATM)", "..."]
    act = ["efficiency 0.5517 +/- 0.0032 (95% CI; ceiling 0.8491 over ATM)", "speed: 1,234 cells", "more"]
    assert compare(exp, act) == []
    assert compare(["speed: ... cells/s"], ["speed: 47,487,755 cells in 1.56 s = 30,458,737 cells/s"]) == []


def test_compare_names_the_number_that_moved():
    problems = compare(["...", "efficiency      0.5518 +/- 0.0091 (95% CI)", "..."],
                       ["feedback=effcap", "efficiency      0.5517 +/- 0.0032 (95% CI)"])
    assert len(problems) == 1 and "0.0091 -> 0.0032" in problems[0] and "0.5518" not in problems[0]


def test_compare_integers_exact_and_text_exact():
    assert compare(["timeouts 725"], ["timeouts 726"]) != []
    assert compare(["seed002_gfr_15tcp"], ["seed001_gfr_15tcp"]) != []
    assert compare(["a 1.5e-03"], ["a 1.6e-03"]) == [] and compare(["a 1.5e-03"], ["a 1.7e-03"]) != []
    assert compare(["x", "y"], ["x"]) != [] and compare(["x"], ["x", "y"]) != []


def test_parse_markers_and_kinds():
    text = ("## S\n<!-- readme-test: slow -->\n```\n$ tcpabr x\nout\n```\n\n```python\n>>> 1 + 1\n2\n```\n"
            "<!-- readme-test: file a.toml -->\n```toml\nx = 1\n```\n```\nplain\n```\n")
    b = parse_readme(text)
    assert [x.kind for x in b] == ["transcript", "session", "file", "unknown"]
    assert b[0].marks == {"slow": ""} and b[1].marks == {} and b[2].marks == {"file": "a.toml"}
    assert parse_readme("<!-- readme-test: exit 2 -->\n```\n$ tcpabr x\n```\n")[0].marks == {"exit": "2"}
    assert _commands(b[0].text, "$ ") == [("tcpabr x", ["out"])]
    assert _session(b[1].text) == [("1 + 1\n", ["2"])]
