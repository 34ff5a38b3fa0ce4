"""Real packets: run a scenario through Linux network namespaces and the TUN router.

The work is done by the router (crate ``crates/xcc-emu``, linked into ``_native`` and run as
``python -m xcclab._router``; ``XCC_EMU_BIN`` selects another build such as ``xcc-emu``):
one namespace per host, one router process running the same link algorithms as the simulator,
NewReno flows on Linux TCP, explicit protocols on xcclab's own transport over UDP. This module
finds the binary, runs it, and stores its results as a run directory with the simulator's
Parquet tables (``run.json`` says ``"mode": "emu"``), so ``xcc plot`` and the reports can put
simulated and emulated runs side by side. See ``docs/emu.md``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .errors import ScenarioError
from .results import RunResult, ScenarioLike, scenario_input

# How long a stopped router may take to delete its namespaces before it is taken for hung,
# killed, and its namespaces deleted from here. A router stops within about 0.1 s of SIGTERM
# whatever it runs (docs/emu.md, "Clean-up"); this is only for one that really hangs.
STOP_GRACE_S = 3.0
# The router's exit statuses (crates/xcc-emu/src/cli.rs).
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class RouterDied(RuntimeError):
    """The router process ended without a result (killed, crashed, or stopped by a signal)."""


def router_command() -> list[str]:
    """How to start the router: ``$XCC_EMU_BIN`` if set, else ``python -m xcclab._router``
    (the router linked into the ``_native`` extension, so an installed wheel has it)."""
    env = os.environ.get("XCC_EMU_BIN")
    if env:
        return [env]
    return [sys.executable, "-m", "xcclab._router"]


def find_binary() -> Path:
    """The program that runs the router (first word of :func:`router_command`)."""
    return Path(router_command()[0])


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # The router checks that this process is still its parent once its parent-death signal
    # is armed (a wrapper killed in between would otherwise leave it running).
    env["XCC_EMU_PARENT_PID"] = str(os.getpid())
    # The package this module came from, whatever the child's working directory.
    package_root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env


def _run_router(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*router_command(), *args], capture_output=True, text=True, env=_child_env()
    )


def _message(r: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in r.stderr.strip().splitlines() if "warning:" not in ln]
    return "\n".join(lines).removeprefix("xcc-emu: ") or f"the router exited {r.returncode}"


def check(scenario: ScenarioLike | None = None, *, stack: str = "udp") -> str | None:
    """None when this machine can emulate (root, /dev/net/tun, iproute2) and, given a
    ``scenario``, when the emulator can run it (every UDP-transport packet fits the MTU, ...);
    else the reason. Nothing is created."""
    if scenario is None:
        r = _run_router(["check"])
        return None if r.returncode == 0 else _message(r)
    inp = scenario_input(scenario)
    with tempfile.TemporaryDirectory(prefix="xcc-emu-") as tmp:
        spec = Path(tmp) / ("scenario.json" if inp.format == "json" else "scenario.toml")
        spec.write_text(inp.text, encoding="utf-8")
        r = _run_router(["check", str(spec), "--stack", stack])
    return None if r.returncode == 0 else f"{inp.source}: {_message(r)}"


def preflight(scenario: ScenarioLike, *, stack: str = "udp") -> None:
    """Raise (:class:`ScenarioError` for the scenario, ``RuntimeError`` for the machine) unless
    ``scenario`` can be emulated here; for commands that simulate first (``xcc compare``,
    ``xcc reproduce --emu``)."""
    why = check(scenario, stack=stack)
    if why is None:
        return
    # The scenario's fault (a value to change), not the machine's: the messages say which.
    scenario_faults = (
        "transport.",
        "not emulated",
        "packet_bytes =",
        "[sessions] workload",
        "session protocols",
        "kernel DCTCP",
    )
    if any(f in why for f in scenario_faults):
        raise ScenarioError(why)
    raise RuntimeError(f"cannot emulate on this machine: {why}")


def cleanup() -> list[str]:
    """Delete the namespaces of dead runs (never those of a live run); return their names."""
    r = _run_router(["cleanup"])
    if r.returncode != 0:
        raise RuntimeError(_message(r))
    return [line.split()[-1] for line in r.stdout.splitlines() if line.startswith("deleted")]


def stale() -> list[str]:
    """Names of the namespaces of dead runs (what ``xcc emu --cleanup`` would delete)."""
    r = _run_router(["stale"])
    return r.stdout.split() if r.returncode == 0 else []


# Routers running now (started by this process), so that a signal handled in the main thread
# can stop them whichever thread started them.
_RUNNING: dict[int, subprocess.Popen[bytes]] = {}
_RUNNING_LOCK = threading.Lock()


def _delete_run(pid: int) -> None:
    subprocess.run(
        [*router_command(), "cleanup", "--run", str(pid)], capture_output=True, env=_child_env()
    )


def stop_all(grace_s: float = STOP_GRACE_S) -> list[int]:
    """Stop every router this process runs (SIGTERM; SIGKILL after ``grace_s``), delete their
    namespaces, and return their process ids. Safe to call from a signal handler's caller."""
    with _RUNNING_LOCK:
        procs = list(_RUNNING.values())
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            print(
                f"xcc: warning: router {p.pid} did not stop within {grace_s:g} s of SIGTERM "
                "(hung): killed, its namespaces deleted from here",
                file=sys.stderr,
                flush=True,
            )
            p.kill()
            p.wait()
        if p.returncode != 0:
            _delete_run(p.pid)
    # Kernel MaxNet loaders of this process (their cgroup held the routers): stopped and reaped.
    from .kernel import loader

    loader.close_all()
    return [p.pid for p in procs]


def _run_tracked(args: list[str], tmp: Path, preexec_fn: Any = None) -> tuple[int, str]:
    """Runs the router with ``args``; returns (exit status, stderr). If it died without
    cleaning up (SIGKILL, a crash), its namespaces are deleted here. Every real-packet run goes
    through here, so a signal to this process (:mod:`xcclab._interrupt`) stops it."""
    err_path = tmp / "router.stderr"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [*router_command(), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=_child_env(),
            preexec_fn=preexec_fn,
        )
        with _RUNNING_LOCK:
            _RUNNING[proc.pid] = proc
        try:
            code = proc.wait()
        except BaseException:
            # Interrupted here (a signal in this thread): the router goes too.
            stop_all()
            raise
        finally:
            with _RUNNING_LOCK:
                _RUNNING.pop(proc.pid, None)
    stderr = err_path.read_text(encoding="utf-8", errors="replace")
    if code < 0 or code not in (0, 1, EXIT_BAD_INPUT, EXIT_INTERRUPTED):
        # Killed or crashed: it could not delete its namespaces, so this process does.
        _delete_run(proc.pid)
    return code, stderr


def emulate(
    scenario: ScenarioLike,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
    *,
    warn: Any = None,
    stack: str = "udp",
) -> RunResult:
    """Run ``scenario`` on real packets (needs root); results as a :class:`RunResult`.

    ``stack="kernel"`` runs MaxNet flows on Linux TCP with the BPF ``maxnet`` congestion
    control, loaded for the run (docs/kernel.md). ``warn`` receives the router's warnings
    (namespaces of dead runs left behind); by default they go to stderr. Raises
    :class:`RouterDied` when the router was killed or stopped."""
    if stack == "kernel":
        from .kernel.dctcp import DctcpSession
        from .kernel.loader import MaxNetParams, MaxNetSession, in_cgroup

        # Both BPF congestion controls, registered for the run (docs/kernel.md).
        with contextlib.ExitStack() as stack_:
            session = stack_.enter_context(MaxNetSession(MaxNetParams(), cgroup="xcc-maxnet-emu"))
            sampler = stack_.enter_context(_DctcpSampler(stack_.enter_context(DctcpSession())))
            enter = in_cgroup(session.cgroup)
            return _emulate(scenario, seed, out, warn, "kernel", enter, sampler.annotate)
    if stack != "udp":
        raise ScenarioError(f"stack {stack!r}: expected udp or kernel")
    return _emulate(scenario, seed, out, warn, "udp", None)


class _DctcpSampler:
    """Reads kernel DCTCP's counters every 0.25 s during a run, so that the result can say
    what alpha and the echoed CE fraction were in the second half of the time its sockets ran
    (past slow start), beside the whole run's (``run_info["kernel_dctcp"]``)."""

    PERIOD_S = 0.25

    def __init__(self, session: Any):
        self.session = session
        self.samples: list[tuple[float, dict[str, int]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> _DctcpSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.PERIOD_S):
            try:
                self.samples.append((time.monotonic(), self.session.stats()))
            except (subprocess.CalledProcessError, json.JSONDecodeError, OSError):
                return

    def annotate(self, result: RunResult) -> None:
        from .kernel.dctcp import difference, summary

        try:
            end = self.session.stats()
        except (subprocess.CalledProcessError, json.JSONDecodeError, OSError):
            return
        if not end["sockets"]:
            return
        info: dict[str, Any] = {"whole_run": summary(end)}
        active = [(t, c) for t, c in self.samples if c["windows"] > 0]
        if len(active) >= 4:
            # From halfway between the first window counted and the last change on.
            changing = [t for (t, c), (_, prev) in zip(active[1:], active) if c != prev]
            t_end = changing[-1] if changing else active[-1][0]
            mid = active[0][0] + (t_end - active[0][0]) / 2
            at_mid = next(c for t, c in active if t >= mid)
            info["second_half"] = summary(difference(end, at_mid))
        result.run_info["kernel_dctcp"] = info


def _emulate(
    scenario: ScenarioLike,
    seed: int | None,
    out: str | os.PathLike[str] | None,
    warn: Any,
    stack: str,
    preexec_fn: Any,
    annotate: Any = None,
) -> RunResult:
    inp = scenario_input(scenario)
    suffix = ".json" if inp.format == "json" else ".toml"
    warn = warn or (lambda m: print(f"xcc: warning: {m}", file=sys.stderr))
    with tempfile.TemporaryDirectory(prefix="xcc-emu-") as tmp:
        spec = Path(tmp) / f"scenario{suffix}"
        spec.write_text(inp.text, encoding="utf-8")
        result_path = Path(tmp) / "result.json"
        args = ["run", str(spec), "--json", str(result_path), "--stack", stack]
        if seed is not None:
            args += ["--seed", str(seed)]
        code, stderr = _run_tracked(args, Path(tmp), preexec_fn)
        for line in stderr.splitlines():
            if line.startswith("xcc-emu: warning: "):
                warn(line.removeprefix("xcc-emu: warning: "))
        message = "\n".join(
            ln.removeprefix("xcc-emu: ")
            for ln in stderr.strip().splitlines()
            if "warning:" not in ln
        )
        if code == EXIT_BAD_INPUT:
            raise ScenarioError(f"{inp.source}: {message}")
        if code == EXIT_INTERRUPTED or code < 0:
            how = "stopped by a signal" if code == EXIT_INTERRUPTED else f"killed by signal {-code}"
            raise RouterDied(f"{inp.source}: the router was {how}; its namespaces are deleted")
        if code != 0:
            raise RuntimeError(f"{inp.source}: {message or f'the router exited {code}'}")
        raw: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
    result = RunResult.from_native(raw, native_version="emu", source=inp.source)
    result.run_info["mode"] = "emu"
    result.run_info["emu"] = raw.get("stats", {})
    result.timing["wall_seconds"] = raw.get("stats", {}).get("sim_seconds")
    if annotate is not None:
        annotate(result)
    if out is not None:
        result.save(out)
    return result


# Beyond these the run no longer describes the modelled network well (docs/emu.md): a 1 ms
# delivery error is 5 % of a 20 ms RTT, and a 10 ms stall is a silence the link never had.
LATENESS_P99_LIMIT_US = 1000
HOST_STALL_LIMIT_US = 10_000
ROUTER_STALL_LIMIT_US = 10_000
# A session source that lost this much sending time to late wake-ups is 0.1 % short over a
# 10 s run, the run-to-run spread of a quiet machine (docs/reproduction/slbn-emu/report.md).
SESSION_PACING_LOST_LIMIT_US = 10_000
# A real-time thread that runs more than 95 % of a second is stopped for the rest of it
# (sched_rt_runtime_us): past 90 % the router is one busy moment from a 50 ms stall.
ROUTER_CPU_SHARE_LIMIT = 0.9


def fidelity_warnings(stats: dict[str, Any]) -> list[str]:
    """What in an emulated run's timing figures (``run_info["emu"]``) makes its results less
    faithful to the modelled network; empty when nothing does."""
    out = []
    # With the limit lifted for the run (crates/xcc-emu/src/sysctl_lift.rs) a busy router is not
    # stopped; with it kept (XCC_EMU_RT_THROTTLE=keep, or not root) it is.
    throttled = not stats.get("rt_throttling_lifted", False)
    for who, key in (("router", "router_realtime"), ("hosts' transport", "hosts_realtime")):
        if stats.get(key) is False:
            out.append(
                f"the {who} ran without real-time priority (SCHED_FIFO refused: needs "
                "CAP_SYS_NICE), so other work on the machine could delay it"
            )
    p99 = stats.get("lateness_p99_us")
    if p99 is not None and p99 > LATENESS_P99_LIMIT_US:
        out.append(
            f"the router delivered 1 % of the packets more than {p99} µs after their "
            "virtual-time instant (a busy machine?)"
        )
    stall = stats.get("host_wake_late_max_us")
    if stall is not None and stall > HOST_STALL_LIMIT_US:
        out.append(f"a host's transport woke up to {stall / 1000:.1f} ms late (a stall)")
    # A stall while the loop was not asleep (docs/emu.md: 50 ms of a CPU given to normal
    # threads ahead of the real-time ones), seen at the paced departures it delayed.
    late = stats.get("transport_pacing_late_max_us")
    if late is not None and late > HOST_STALL_LIMIT_US:
        out.append(
            f"xcclab's transport came to a paced departure {late / 1000:.1f} ms late (a stall: "
            "its flows sent less than their rate)"
        )
    if stats.get("keep_awake") == "off":
        out.append(
            "the CPUs were allowed to idle (XCC_EMU_KEEP_AWAKE=0): wake-ups may add hundreds "
            "of microseconds"
        )
    late = stats.get("lateness_max_us")
    if late is not None and late > ROUTER_STALL_LIMIT_US:
        out.append(
            f"the router delivered a packet {late / 1000:.1f} ms late (a stall: "
            + ("real-time throttling or no CPU)" if throttled else "no CPU)")
        )
    share = stats.get("router_cpu_share")
    if share is not None and share > ROUTER_CPU_SHARE_LIMIT and throttled:
        out.append(
            f"the router used {100 * share:.0f} % of its CPU, near the kernel's 95 % limit "
            "for real-time threads (beyond it the router stops for the rest of the second)"
        )
    # Seed 004's sessions (session_hosts.rs): a source that wakes more than its 1 ms catch-up
    # late sends that much less (docs/reproduction/slbn-emu/report.md).
    if stats.get("session_hosts_realtime") is False:
        out.append(
            "the hosts' session driver ran without real-time priority (SCHED_FIFO refused: "
            "needs CAP_SYS_NICE), so other work on the machine could delay it"
        )
    lost = stats.get("session_pacing_lost_max_us")
    if lost is not None and lost > SESSION_PACING_LOST_LIMIT_US:
        out.append(
            f"a session's source lost {lost / 1000:.1f} ms of sending to late wake-ups (its "
            "delivered rate is lower by that share of the run: a stall)"
        )
    return out
