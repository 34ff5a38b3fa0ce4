"""The task executor: results per task, and a crashing worker fails only its own task."""

from __future__ import annotations

import os
import signal
import time

import pytest

from xcclab.executor import run_tasks
from xcclab.isolated import Limits, run_isolated


def square_or_die(x: int) -> int:
    if x == 3:
        os._exit(17)  # a hard crash: no exception, the process is gone
    return x * x


def test_a_crashing_task_fails_alone_on_the_pool():
    tasks = list(range(6))
    done = []
    results = run_tasks(
        square_or_die, tasks, [f"t{x}" for x in tasks], jobs=2, on_done=lambda: done.append(1)
    )
    by_id = {task_id: (result, error) for task_id, result, error in results}
    assert by_id.pop("t3") == (None, "the worker process exited with status 17 without a result")
    assert by_id == {f"t{x}": (x * x, None) for x in tasks if x != 3}
    assert len(done) == 6


def test_argument_errors():
    with pytest.raises(ValueError, match="not both"):
        run_tasks(abs, [1], ["a"], scheduler="tcp://x:1", local_cluster=True)
    with pytest.raises(ValueError, match="jobs"):
        run_tasks(abs, [1], ["a"], jobs=0)
    assert run_tasks(abs, [], []) == []


def sleep_for(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def grab_memory(mib: int) -> int:
    block = bytearray(mib << 20)
    for k in range(0, len(block), 4096):  # touch every page: resident, not only reserved
        block[k] = 1
    time.sleep(2)
    return len(block)


def kill_self(sig: int) -> None:
    os.kill(os.getpid(), sig)


def raise_value_error(_: object) -> None:
    raise ValueError("bad point")


def test_limits_kill_a_task_and_say_which():
    out = run_isolated(sleep_for, [0.01, 30.0], jobs=2, limits=Limits(seconds=1.0))
    assert out[0].result == 0.01 and out[0].error is None and out[0].peak_rss_bytes > 0
    assert out[1].error == "exceeded its time limit of 1 s" and out[1].wall_seconds < 10
    out = run_isolated(grab_memory, [400], limits=Limits(memory_bytes=200 << 20))
    assert out[0].error.startswith("exceeded its memory limit of 0.20 GiB (resident ")


def test_a_dead_worker_is_reported_with_its_signal_or_exception():
    out = run_isolated(kill_self, [signal.SIGKILL, signal.SIGSEGV])
    assert out[0].error.startswith(
        "killed by SIGKILL, most often the kernel's out-of-memory killer"
    )
    assert out[1].error.startswith("the worker process died of SIGSEGV")
    out = run_isolated(raise_value_error, [None])
    assert out[0].error == "ValueError: bad point"


def test_run_tasks_applies_limits_per_task():
    results = run_tasks(sleep_for, [0.01, 30.0], ["a", "b"], jobs=2, limits=Limits(seconds=1.0))
    by_id = {task_id: (result, error) for task_id, result, error in results}
    assert by_id == {"a": (0.01, None), "b": (None, "exceeded its time limit of 1 s")}
