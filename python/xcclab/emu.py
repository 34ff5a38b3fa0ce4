"""Real packets: run a scenario through Linux network namespaces and the TUN router.

The work is done by the ``xcc-emu`` binary (crate ``crates/xcc-emu``, built by ``make build``):
one namespace per host, one router process running the same link algorithms as the simulator,
NewReno flows on Linux TCP, explicit protocols on xcclab's own transport over UDP. This module
finds the binary, runs it, and stores its results as a run directory with the simulator's
Parquet tables (``run.json`` says ``"mode": "emu"``), so ``xcc plot`` and the reports can put
simulated and emulated runs side by side. See ``docs/emu.md``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .results import RunResult, ScenarioLike, scenario_input

_REPO = Path(__file__).resolve().parents[2]


def find_binary() -> Path:
    """The ``xcc-emu`` binary: ``$XCC_EMU_BIN``, else the workspace's release or debug build."""
    env = os.environ.get("XCC_EMU_BIN")
    if env:
        return Path(env)
    for profile in ("release", "debug"):
        p = _REPO / "target" / profile / "xcc-emu"
        if p.is_file():
            return p
    found = shutil.which("xcc-emu")
    if found:
        return Path(found)
    raise RuntimeError(
        "the xcc-emu binary is not built: run `make build` "
        "(or `cargo build --release -p xcc-emu`), or set XCC_EMU_BIN"
    )


def _run_binary(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(find_binary()), *args], capture_output=True, text=True)


def check() -> str | None:
    """None when this machine can emulate (root, /dev/net/tun), else the reason it cannot."""
    r = _run_binary(["check"])
    return None if r.returncode == 0 else r.stderr.strip().removeprefix("xcc-emu: ")


def cleanup() -> list[str]:
    """Delete every namespace a previous (crashed) run left; return their names."""
    r = _run_binary(["cleanup"])
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().removeprefix("xcc-emu: "))
    return [line.split()[-1] for line in r.stdout.splitlines() if line.startswith("deleted")]


def emulate(
    scenario: ScenarioLike,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Run ``scenario`` on real packets (needs root); results as a :class:`RunResult`."""
    inp = scenario_input(scenario)
    suffix = ".json" if inp.format == "json" else ".toml"
    with tempfile.TemporaryDirectory(prefix="xcc-emu-") as tmp:
        spec = Path(tmp) / f"scenario{suffix}"
        spec.write_text(inp.text, encoding="utf-8")
        result_path = Path(tmp) / "result.json"
        args = ["run", str(spec), "--json", str(result_path)]
        if seed is not None:
            args += ["--seed", str(seed)]
        r = _run_binary(args)
        if r.returncode != 0:
            message = r.stderr.strip().removeprefix("xcc-emu: ") or f"xcc-emu exited {r.returncode}"
            raise RuntimeError(f"{inp.source}: {message}")
        raw: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
    result = RunResult.from_native(raw, native_version="emu", source=inp.source)
    result.run_info["mode"] = "emu"
    result.run_info["emu"] = raw.get("stats", {})
    result.timing["wall_seconds"] = raw.get("stats", {}).get("sim_seconds")
    if out is not None:
        result.save(out)
    return result


# Beyond these the run no longer describes the modelled network well (docs/emu.md): a 1 ms
# delivery error is 5 % of a 20 ms RTT, and a 10 ms stall is a silence the link never had.
LATENESS_P99_LIMIT_US = 1000
HOST_STALL_LIMIT_US = 10_000


def fidelity_warnings(stats: dict[str, Any]) -> list[str]:
    """What in an emulated run's timing figures (``run_info["emu"]``) makes its results less
    faithful to the modelled network; empty when nothing does."""
    out = []
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
    if stats.get("keep_awake") == "off":
        out.append(
            "the CPUs were allowed to idle (XCC_EMU_KEEP_AWAKE=0): wake-ups may add hundreds "
            "of microseconds"
        )
    return out
