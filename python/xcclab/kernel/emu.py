"""Runs a scenario through the emu router (``python -m xcclab._router run``) with MaxNet
flows on a chosen stack: ``udp`` (xcclab's transport over UDP) or ``kernel`` (Linux TCP with
the BPF ``maxnet`` congestion control, loaded here for the run, the emu process inside its
cgroup).

Returns the simulator's :class:`~xcclab.results.RunResult`, so reports overlay the three.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .loader import MaxNetParams, MaxNetSession, in_cgroup

STACKS = ("udp", "kernel")


def run_emu(scenario: Any, stack: str, params: MaxNetParams | None = None) -> Any:
    """Emulates ``scenario`` (an :class:`xcclab.scenario.Scenario`, or its dict form) with
    MaxNet flows on ``stack``; the router and the link algorithms are the same either way."""
    from ..results import RunResult

    if stack not in STACKS:
        raise ValueError(f"stack {stack!r}: expected one of {', '.join(STACKS)}")
    from ..emu import _run_tracked

    with tempfile.TemporaryDirectory(prefix="xcc-emu-") as tmp:
        path = Path(tmp) / "scenario.json"
        text = json.dumps(scenario) if isinstance(scenario, dict) else scenario.to_json()
        path.write_text(text)
        out = Path(tmp) / "out.json"
        args = ["run", str(path), "--stack", stack, "--json", str(out)]
        # Tracked, so that a signal to this process stops the router at once (xcclab._interrupt).
        if stack == "kernel":
            with MaxNetSession(params or MaxNetParams(), cgroup="xcc-maxnet-emu") as session:
                code, stderr = _run_tracked(args, Path(tmp), in_cgroup(session.cgroup))
        else:
            code, stderr = _run_tracked(args, Path(tmp))
        if code != 0:
            raise RuntimeError(f"xcc-emu run --stack {stack} failed: {stderr.strip()[-2000:]}")
        raw = json.loads(out.read_text())
    result = RunResult.from_native(raw, native_version=f"xcc-emu ({stack})", source=str(path))
    # The router's own counters (lateness, rewrites) and the machine's load during the run: a
    # shared machine's load shows up as router stalls.
    result.run_info["emu"] = {**raw.get("stats", {}), "loadavg_1min_after": os.getloadavg()[0]}
    return result
