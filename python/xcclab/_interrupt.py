"""Commands that run real packets stop cleanly on SIGINT, SIGTERM and SIGHUP.

The work (simulations, the router's runs, the writing of the output) runs in a worker thread;
the main thread only waits, so it takes a signal at once, even while the worker is inside the
simulator (which releases the GIL). On a signal it stops every router this process started
(they delete their namespaces), deletes any output directory still being built, and exits
with 128 + the signal's number: nothing of the run is left behind (docs/emu.md).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _Stop(BaseException):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_stop(signum: int, _frame: Any) -> None:
    raise _Stop(signum)


def run_interruptible(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a worker thread; a signal stops it all and exits the process.
    Must be called from the main thread."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the main thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="xcc-work", daemon=True)
    previous = {s: signal.signal(s, _raise_stop) for s in SIGNALS}
    try:
        worker.start()
        while worker.is_alive():
            worker.join(0.2)
    except _Stop as stop:
        _exit_on_signal(stop.signum)
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    if "error" in box:
        raise box["error"]
    return box["value"]


def _exit_on_signal(signum: int) -> None:
    # Further signals must not interrupt the clean-up.
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    from . import emu
    from ._fsutil import discard_pending

    stopped = emu.stop_all()
    discard_pending()
    name = signal.Signals(signum).name
    print(
        f"xcc: {name}: stopped"
        + (f" {len(stopped)} router(s) and deleted their namespaces" if stopped else "")
        + "; nothing written",
        file=sys.stderr,
        flush=True,
    )
    os._exit(128 + signum)
