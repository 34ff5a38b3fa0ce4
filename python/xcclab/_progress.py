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


class Stages:
    """The stages of a whole run (simulation, references, writing), reported on stderr.

    Not on a terminal (a log, CI): one line per stage when it ends, with its wall time
    (``xcc: simulate: 3.21 s``). On a terminal: the stage's name while it runs (overwritten in
    place), then the same line; the simulation's own bar is :class:`ProgressBar`. Disabled
    (``--quiet``): nothing.
    """

    def __init__(self, *, file: TextIO | None = None, enabled: bool = True) -> None:
        self._file = file if file is not None else sys.stderr
        self._enabled = enabled
        isatty = getattr(self._file, "isatty", None)
        self._tty = bool(isatty and isatty())

    def stage(self, name: str) -> _Stage:
        """A context manager timing stage ``name``."""
        return _Stage(self, name)

    def _start(self, name: str) -> None:
        if self._enabled and self._tty:
            print(f"xcc: {name} ...", end="\r", file=self._file, flush=True)

    def _end(self, name: str, seconds: float) -> None:
        if self._enabled:
            print(f"xcc: {name}: {seconds:.2f} s", file=self._file, flush=True)


class _Stage:
    def __init__(self, stages: Stages, name: str) -> None:
        self._stages, self._name, self._t0 = stages, name, 0.0

    def __enter__(self) -> None:
        import time

        self._t0 = time.monotonic()
        self._stages._start(self._name)

    def __exit__(self, *exc: object) -> None:
        import time

        if exc[0] is None:
            self._stages._end(self._name, time.monotonic() - self._t0)
