"""The task executor: results per task, and a crashing worker fails only its own task."""

from __future__ import annotations

import os

import pytest

from xcclab.executor import CRASHED, run_tasks


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
    assert by_id.pop("t3") == (None, CRASHED)
    assert by_id == {f"t{x}": (x * x, None) for x in tasks if x != 3}
    assert len(done) == 6


def test_argument_errors():
    with pytest.raises(ValueError, match="not both"):
        run_tasks(abs, [1], ["a"], scheduler="tcp://x:1", local_cluster=True)
    with pytest.raises(ValueError, match="jobs"):
        run_tasks(abs, [1], ["a"], jobs=0)
    assert run_tasks(abs, [], []) == []
