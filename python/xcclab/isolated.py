"""Run one task in a child process under time and memory limits, and say how it ended.

A sweep point or a fuzzer case that dies takes only its own process with it, and the report
names the cause instead of "the worker died": a Python exception (its message), a time limit
(killed after ``seconds``), a memory limit (resident memory polled every
:data:`POLL_SECONDS` and the child killed past ``memory_bytes``; the address space is also
capped at ``memory_bytes`` plus :data:`ADDRESS_SPACE_HEADROOM`, so one giant allocation fails
at once instead of waking the kernel's out-of-memory killer), a signal (SIGKILL: most often the
kernel's out-of-memory killer; SIGABRT: a Rust abort, with the last line it printed), or an exit
status. The child's stderr goes to a file whose last lines the report quotes.

Children are started with ``spawn`` (the parent may hold polars' and tqdm's threads, which
``fork`` would copy half-locked).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any

#: How often the parent samples a child's resident memory.
POLL_SECONDS = 0.05
#: Longest a child may take to start (import Python, polars and the native module) before its
#: time limit starts counting; past this it is killed as stuck.
STARTUP_SECONDS = 120.0
#: Address space a child may reserve beyond its memory limit: Python with polars and the
#: native module maps ~1.5 GB it never touches (thread stacks, allocator arenas).
ADDRESS_SPACE_HEADROOM = 4 << 30


@dataclass(frozen=True)
class Limits:
    """Per-task limits; None: no limit."""

    seconds: float | None = None
    memory_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.seconds is not None and not self.seconds > 0:
            raise ValueError(f"time limit: expected seconds > 0, got {self.seconds!r}")
        if self.memory_bytes is not None and not self.memory_bytes > 0:
            raise ValueError(f"memory limit: expected bytes > 0, got {self.memory_bytes!r}")


@dataclass(frozen=True)
class Outcome:
    """How a task ended: ``result`` if it returned, else ``error`` says why not."""

    result: Any
    error: str | None
    #: Largest resident memory of the child (bytes), as the kernel counted it, if it returned.
    peak_rss_bytes: int | None
    wall_seconds: float


def _child(fn: Callable[[Any], Any], task: Any, conn: Any, memory: int | None, err: str) -> None:
    import resource

    fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 2)
    if memory is not None:
        cap = memory + ADDRESS_SPACE_HEADROOM
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    conn.send(("started",))
    try:
        result = fn(task)
    except MemoryError:
        conn.send(("error", "out of memory: a Python allocation failed (MemoryError)"))
        return
    except BaseException as exc:  # noqa: BLE001 - everything is reported, PanicException too
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    conn.send(("ok", result, peak))


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _tail(path: str, lines: int = 3) -> str:
    try:
        with open(path, errors="replace") as f:
            text = [ln.strip() for ln in f.read().splitlines() if ln.strip()]
    except OSError:
        return ""
    return " | ".join(text[-lines:])


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def describe_exit(exitcode: int | None, stderr_tail: str, limits: Limits) -> str:
    """Why a child that sent nothing back ended."""
    said = f" (it printed: {stderr_tail})" if stderr_tail else ""
    if exitcode is None:
        return "the worker process vanished"
    if exitcode < 0:
        sig = -exitcode
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        if "memory allocation of" in stderr_tail:
            limit = f" (memory limit {_gib(limits.memory_bytes)})" if limits.memory_bytes else ""
            return f"out of memory{limit}: an allocation failed and the process aborted{said}"
        if sig == signal.SIGKILL:
            return f"killed by SIGKILL, most often the kernel's out-of-memory killer{said}"
        return f"the worker process died of {name}{said}"
    return f"the worker process exited with status {exitcode} without a result{said}"


def run_isolated(
    fn: Callable[[Any], Any],
    tasks: Sequence[Any],
    *,
    jobs: int = 1,
    limits: Limits = Limits(),
    on_done: Callable[[int, Outcome], None] | None = None,
) -> list[Outcome]:
    """``fn(task)`` for every task, each in its own child process, at most ``jobs`` at once;
    outcomes in task order. ``fn`` must be a module-level function (``spawn`` pickles it)."""
    ctx = multiprocessing.get_context("spawn")
    outcomes: list[Outcome | None] = [None] * len(tasks)
    pending = list(range(len(tasks)))[::-1]
    # Per running task: process, pipe, stderr file, when it was started, when fn started.
    running: dict[int, list[Any]] = {}
    with tempfile.TemporaryDirectory(prefix="xcc-isolated-") as tmp:
        while pending or running:
            while pending and len(running) < max(1, jobs):
                i = pending.pop()
                recv, send = ctx.Pipe(duplex=False)
                err = os.path.join(tmp, f"{i}.stderr")
                proc = ctx.Process(
                    target=_child, args=(fn, tasks[i], send, limits.memory_bytes, err), daemon=True
                )
                proc.start()
                send.close()
                running[i] = [proc, recv, err, time.monotonic(), None]
            wait(
                [r[1] for r in running.values()] + [r[0].sentinel for r in running.values()],
                timeout=POLL_SECONDS,
            )
            for i in list(running):
                proc, recv, err, spawned, t0 = running[i]
                now = time.monotonic()
                outcome = None
                while outcome is None and recv.poll():
                    try:
                        msg = recv.recv()
                    except (EOFError, OSError):
                        break
                    if msg[0] == "started":
                        t0 = running[i][4] = now
                    elif msg[0] == "ok":
                        outcome = Outcome(msg[1], None, msg[2], now - (t0 or spawned))
                    else:
                        outcome = Outcome(None, msg[1], None, now - (t0 or spawned))
                elapsed = now - (t0 or spawned)
                if outcome is None and t0 is None and elapsed > STARTUP_SECONDS:
                    proc.kill()
                    outcome = Outcome(
                        None, f"did not start within {STARTUP_SECONDS:g} s", None, elapsed
                    )
                if outcome is None and not proc.is_alive():
                    proc.join()
                    outcome = Outcome(
                        None, describe_exit(proc.exitcode, _tail(err), limits), None, elapsed
                    )
                timed = t0 is not None and limits.seconds is not None
                if outcome is None and timed and elapsed > limits.seconds:
                    proc.kill()
                    outcome = Outcome(
                        None, f"exceeded its time limit of {limits.seconds:g} s", None, elapsed
                    )
                if outcome is None and limits.memory_bytes is not None:
                    rss = _rss_bytes(proc.pid)
                    if rss > limits.memory_bytes:
                        proc.kill()
                        outcome = Outcome(
                            None,
                            f"exceeded its memory limit of {_gib(limits.memory_bytes)} "
                            f"(resident {_gib(rss)})",
                            None,
                            elapsed,
                        )
                if outcome is not None:
                    proc.join()
                    recv.close()
                    del running[i]
                    outcomes[i] = outcome
                    if on_done:
                        on_done(i, outcome)
    return [o for o in outcomes if o is not None]
