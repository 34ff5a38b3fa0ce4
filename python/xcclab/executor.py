"""Run independent tasks on local processes or a Dask cluster, surviving crashed workers.

Sweeps (:mod:`xcclab.sweep_runner`) and ``xcc reproduce --all`` both hand a list of tasks and a
top-level function to :func:`run_tasks`. The function must be importable by name in a worker
(a module-level function) and should turn ordinary failures into data itself; what this module
adds is what a function cannot do for itself:

- **Process pool** (default, ``jobs`` processes, ``spawn`` start method: the parent may hold
  polars' and tqdm's threads, which ``fork`` would copy half-locked). A worker that *dies* (a
  segfault, an abort) breaks the whole pool and every task in flight with it; those tasks are
  rerun one per fresh process (:mod:`xcclab.isolated`), so only the culprit ends up failed,
  and its error says how it died (out of memory, the signal, the exit status).
- **Limits**: with ``limits`` (a time and a resident-memory limit per task) every task runs in
  its own child process (:func:`xcclab.isolated.run_isolated`), killed when it passes either
  limit, and the error says which.
- **Dask distributed**: ``scheduler="tcp://host:8786"`` submits to a running cluster;
  ``local_cluster=True`` starts a :class:`dask.distributed.LocalCluster` with ``jobs``
  single-threaded worker processes. A task whose worker died is reported by Dask per task.

Results come back as ``(task_id, result, error)`` in completion order; ``error`` is a message
when the task could not return at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .isolated import Limits, run_isolated

Outcome = tuple[str, Any, "str | None"]


def run_tasks(
    fn: Callable[[Any], Any],
    tasks: Sequence[Any],
    ids: Sequence[str],
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    local_cluster: bool = False,
    on_done: Callable[[], None] | None = None,
    limits: Limits | None = None,
) -> list[Outcome]:
    """Run ``fn(task)`` for every task; return ``(id, result, error)`` for each."""
    if scheduler and local_cluster:
        raise ValueError("give either a Dask scheduler address or local_cluster, not both")
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs: expected a number of processes >= 1, got {jobs}")
    if not tasks:
        return []
    tick = on_done or (lambda: None)
    if limits is not None and (limits.seconds is not None or limits.memory_bytes is not None):
        if scheduler or local_cluster:
            raise ValueError("per-task limits apply to the local process pool, not to Dask")
        done = run_isolated(
            fn, tasks, jobs=jobs or os.cpu_count() or 1, limits=limits, on_done=lambda i, o: tick()
        )
        return [(ids[i], o.result, o.error) for i, o in enumerate(done)]
    if scheduler or local_cluster:
        return _run_dask(fn, tasks, ids, scheduler, jobs, tick)
    return _run_pool(fn, tasks, ids, jobs or os.cpu_count() or 1, tick)


def _run_pool(
    fn: Callable[[Any], Any],
    tasks: Sequence[Any],
    ids: Sequence[str],
    jobs: int,
    tick: Callable[[], None],
) -> list[Outcome]:
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    results: list[Outcome] = []
    crashed = []
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=ctx) as pool:
        futures = {pool.submit(fn, t): i for i, t in enumerate(tasks)}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                results.append((ids[i], fut.result(), None))
                tick()
            except BrokenProcessPool:
                crashed.append(i)
    # Isolate: one process per task, so only the culprit fails, with the cause of its death.
    rerun = sorted(crashed)
    for i, o in zip(rerun, run_isolated(fn, [tasks[i] for i in rerun], jobs=1)):
        results.append((ids[i], o.result, o.error))
        tick()
    return results


def _run_dask(
    fn: Callable[[Any], Any],
    tasks: Sequence[Any],
    ids: Sequence[str],
    scheduler: str | None,
    jobs: int | None,
    tick: Callable[[], None],
) -> list[Outcome]:
    try:
        from dask.distributed import Client, LocalCluster
        from dask.distributed import as_completed as dask_completed
    except ImportError as exc:  # pragma: no cover - dask is a declared dependency
        raise RuntimeError(
            "Dask distributed is not installed: pip install 'dask[distributed]'"
        ) from exc
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=jobs or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
    client = Client(cluster if cluster is not None else scheduler)
    results: list[Outcome] = []
    try:
        futures = client.map(fn, list(tasks), key=[f"xcc-{i}" for i in ids])
        by_key = {f.key: task_id for f, task_id in zip(futures, ids)}
        for fut in dask_completed(futures):
            try:
                results.append((by_key[fut.key], fut.result(), None))
            except Exception as exc:  # the worker died or the task raised
                results.append((by_key[fut.key], None, f"{type(exc).__name__}: {exc}"))
            tick()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return results
