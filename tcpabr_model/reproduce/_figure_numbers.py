"""Which paper figures to reproduce (light: checked before pandas and the models are imported)."""

from __future__ import annotations

from .._validate import check_int

__all__ = ["ALL_FIGURES", "parse_figures"]

#: The figures of seed 004 that ``tcpabr reproduce`` regenerates.
ALL_FIGURES = tuple(range(8, 23))


def parse_figures(figures) -> tuple:
    """Validate a figure selection: None (all), an int, a comma-separated string or a sequence of
    ints, each in 8..22.  Returns the sorted tuple of figure numbers."""
    if figures is None:
        return ALL_FIGURES
    if isinstance(figures, str):
        items = [x.strip() for x in figures.split(",")]
        if any(items) and not all(items):    # "8,,9" or "8,": a slip, not a selection
            raise ValueError(f"figures={figures!r} is invalid: an empty item; must be comma-separated "
                             "integers in 8..22")
        items = [x for x in items if x]
        try:
            nums = [int(x) for x in items]
        except ValueError:
            raise ValueError(f"figures={figures!r} is invalid: must be comma-separated integers in 8..22") from None
    elif isinstance(figures, int) and not isinstance(figures, bool):
        nums = [figures]
    else:
        try:
            nums = [check_int("figures", x) for x in figures]
        except TypeError:
            raise ValueError(f"figures={figures!r} is invalid: must be figure numbers in 8..22") from None
    if not nums:
        raise ValueError(f"figures={figures!r} is invalid: no figure number given (allowed 8..22)")
    bad = [n for n in nums if n not in ALL_FIGURES]
    if bad:
        raise ValueError(f"figures={figures!r} is invalid: {bad} not among the reproduced figures 8..22")
    return tuple(sorted(set(nums)))
