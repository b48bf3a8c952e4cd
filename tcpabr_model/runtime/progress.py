"""A progress bar for long work only: tqdm's bar, shown once the work has lasted a given time."""

from __future__ import annotations

import time

__all__ = ["LazyBar"]


class LazyBar:
    """A tqdm bar that appears only once the work has lasted ``after`` seconds (``show``
    False: never); :meth:`update` counts one step, shown or not."""

    def __init__(self, show: bool, desc: str, unit: str, after: float):
        self.show, self.desc, self.unit, self.after = show, desc, unit, after
        self.t0 = time.perf_counter()
        self.bar = None
        self.n = 0

    def update(self) -> None:
        self.n += 1
        if not self.show:
            return
        if self.bar is None:
            if time.perf_counter() - self.t0 < self.after:
                return
            from tqdm.auto import tqdm

            self.bar = tqdm(desc=self.desc, unit=self.unit, initial=self.n)
        else:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
