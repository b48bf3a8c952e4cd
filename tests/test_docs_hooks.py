"""docs/hooks.py: the Sphinx roles of the docstrings (``:func:``, ``:math:``, ...) are not shown
raw on the API pages."""

import pytest

from _scripts import load_script

pytest.importorskip("mkdocs")


def test_roles_are_stripped_before_code():
    hooks = load_script("docs/hooks.py", "docs_hooks")
    html = 'x :func:<code>f</code>, :py:class:<code>C</code>; a:math: b'
    out = hooks.on_page_content(html, None, None, None)
    assert out == 'x <code>f</code>, <code>C</code>; a:math: b'


def test_math_is_rendered_as_mathml():
    """``:math:`` becomes inline MathML (the escaped ``&lt;`` read as ``<``), not LaTeX in code."""
    pytest.importorskip("latex2mathml")
    hooks = load_script("docs/hooks.py", "docs_hooks")
    out = hooks.on_page_content('x :math:<code>T &lt; \\Delta_{k}</code> y', None, None, None)
    assert out.startswith('x <math ') and out.endswith('</math> y')
    assert "<msub>" in out and "&#x00394;" in out and "&#x0003C;" in out and "\\" not in out and "<code>" not in out


def test_math_that_does_not_convert_stays_as_code():
    pytest.importorskip("latex2mathml")
    hooks = load_script("docs/hooks.py", "docs_hooks")
    out = hooks.on_page_content('x :math:<code>x^</code> y', None, None, None)
    assert out == 'x <code>x^</code> y'


def test_a_constant_built_at_import_shows_its_value():
    """``api_page``'s summary of a re-exported constant: its value, not "of 16 items" (a string's length)."""
    hooks = load_script("docs/hooks.py", "docs_hooks")
    t = hooks.api_page("sweep")
    assert "`str` constant: `'TCPABR_CACHE_DIR'`." in t and "`str` of" not in t
