"""A progress bar for long simulations, fed by the native progress callback.

The native module calls the callback with the simulated fraction done (0..1) every few hundred
thousand events. The bar appears on stderr only once a run has lasted ``delay`` seconds (tqdm's
``delay``), and only on a terminal (``disable=None``), so short runs and CI logs stay clean.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO


class ProgressBar:
    """Callable ``progress(fraction)`` driving a tqdm bar in per-mille steps."""

    def __init__(
        self,
        desc: str = "run",
        *,
        delay: float = 2.0,
        file: TextIO | None = None,
        disable: bool | None = None,
    ) -> None:
        self._desc = desc
        self._delay = delay
        self._file = file if file is not None else sys.stderr
        self._disable = disable
        self._bar: Any = None
        self._done = 0  # per-mille reported so far

    def __call__(self, fraction: float) -> None:
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(
                total=1000,
                desc=self._desc,
                delay=self._delay,
                file=self._file,
                disable=self._disable,
                leave=False,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]",
            )
        step = max(0, min(1000, int(fraction * 1000)))
        if step > self._done:
            self._bar.update(step - self._done)
            self._done = step

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
