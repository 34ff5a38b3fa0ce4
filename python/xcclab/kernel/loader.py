"""Starts and stops kernel MaxNet: the ``maxnet_loader`` process (kernel/src/maxnet_loader.c).

The loader registers the ``maxnet`` congestion control through a struct_ops link (flag
TCP_CONG_NON_RESTRICTED) and attaches the sock_ops program to a *child* cgroup through a cgroup
link, then waits for a signal. Both are file-descriptor links: when the loader exits, however
it exits, the kernel detaches them. ``xcc kernel load`` leaves it running in the background
(state in /run/xcc-maxnet); :class:`MaxNetSession` runs it for the length of a ``with`` block.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import struct
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .build import SOURCE_DIR, Artifacts, build, build_dir, missing_prerequisites

STATE_DIR = Path("/run/xcc-maxnet")
DEFAULT_CGROUP = "xcc-maxnet"
FRAC_BITS = 18
CODE_MAX = (1 << 23) - 1
# struct maxnet_config in kernel/src/maxnet.bpf.c.
CONFIG_LAYOUT = struct.Struct("<IIqqQIIII")


def price_code(seconds: float) -> int:
    """A price in seconds as its 23-bit code (18 fraction bits), as xcc-core encodes it."""
    return max(0, min(CODE_MAX, round(seconds * (1 << FRAC_BITS))))


@dataclass(frozen=True)
class MaxNetParams:
    """Source parameters (seed 000 Section VI) and the test hooks of the sock_ops program."""

    t_s: float = 0.4
    alpha: float = 0.66
    eta: float = 0.06
    x_max_bps: float = 1e15
    maxstart: bool = True
    min_cwnd: int = 2
    set_cc: bool = False
    #: Test mode: the receiver acts as a router on the path that stamps max(price, this).
    fixed_price_s: float | None = None
    #: Test mode: the MaxStart spare capacity (bit/s) that router answers.
    fixed_spare_bps: float | None = None

    def loader_args(self) -> list[str]:
        args = [
            f"--t={self.t_s!r}",
            f"--alpha={self.alpha!r}",
            f"--eta={self.eta!r}",
            f"--x-max={self.x_max_bps!r}",
            f"--min-cwnd={self.min_cwnd}",
        ]
        if not self.maxstart:
            args.append("--no-maxstart")
        if self.set_cc:
            args.append("--set-cc")
        if self.fixed_price_s is not None:
            args.append(f"--fixed-price={price_code(self.fixed_price_s)}")
        if self.fixed_spare_bps is not None:
            args.append(f"--fixed-spare={self.spare_code(self.fixed_spare_bps)}")
        return args

    def demand_bps(self, q_s: float) -> float:
        """D(q) = x_max exp(-q / T)."""
        return self.x_max_bps * math.exp(-q_s / self.t_s)

    def spare_code(self, spare_bps: float) -> int:
        """A spare capacity as its price-equivalent code (protocols.md 1.7 P6)."""
        return price_code(self.t_s * math.log(self.x_max_bps / spare_bps))


BPFFS = Path("/sys/fs/bpf")


def bpffs() -> Path:
    """The BPF filesystem (for the config map's pin), mounted if it is not."""
    for line in Path("/proc/self/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[2] == "bpf" and Path(parts[1]) == BPFFS:
            return BPFFS
    subprocess.run(["mount", "-t", "bpf", "bpf", str(BPFFS)], check=True, capture_output=True)
    return BPFFS


def cgroup2_root() -> Path:
    for line in Path("/proc/self/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[2] == "cgroup2":
            return Path(parts[1])
    raise RuntimeError("no cgroup v2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup)")


def child_cgroup(name: str) -> Path:
    if not name or "/" in name or name in (".", ".."):
        raise ValueError(f"cgroup name {name!r}: expected one plain directory name")
    path = cgroup2_root() / name
    path.mkdir(exist_ok=True)
    return path


def remove_cgroup(path: Path) -> None:
    """Moves any process left in the cgroup to its parent, then removes it."""
    if not path.exists():
        return
    procs = path / "cgroup.procs"
    for pid in procs.read_text().split() if procs.exists() else []:
        with contextlib.suppress(OSError):  # it exited meanwhile
            (path.parent / "cgroup.procs").write_text(pid)
    for _ in range(50):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)


def in_cgroup(cgroup: Path):
    """A ``preexec_fn`` that moves the child into ``cgroup`` before it runs anything."""

    def enter() -> None:
        (cgroup / "cgroup.procs").write_text(str(os.getpid()))

    return enter


def _start(
    art: Artifacts,
    params: MaxNetParams,
    cgroup: Path,
    pin: Path | None,
    log: Path,
    die_with_parent: bool,
) -> subprocess.Popen:
    cmd = [str(art.loader), f"--obj={art.maxnet_obj}", f"--cgroup={cgroup}", *params.loader_args()]
    if pin is not None:
        cmd.append(f"--pin-dir={pin}")
    if die_with_parent:
        cmd.append("--die-with-parent")
    with open(log, "w") as err:
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=not die_with_parent,
        )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("ready"):
        proc.wait(timeout=10)
        raise RuntimeError(
            f"maxnet_loader failed (exit {proc.returncode}): {log.read_text().strip()[-2000:]}"
        )
    return proc


def _stop(pid: int, child: subprocess.Popen | None = None, timeout_s: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout_s``; ``child`` when it is ours to reap."""
    if child is None and not _is_loader(pid):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if child is not None:
        try:
            child.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _is_loader(pid):  # gone, or a zombie its new parent has not reaped yet
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def registered_struct_ops() -> list[str]:
    """Names of the BPF struct_ops the kernel holds (``bpftool struct_ops list``)."""
    try:
        out = subprocess.run(
            ["bpftool", "-j", "struct_ops", "list"], capture_output=True, text=True, check=False
        ).stdout
    except FileNotFoundError:  # no bpftool: nothing of ours can be registered either
        return []
    try:
        return [entry.get("name", "") for entry in json.loads(out or "[]")]
    except json.JSONDecodeError:
        return []


def wait_unregistered(timeout_s: float = 15.0, name: str = "maxnet") -> bool:
    """Waits until no struct_ops map called ``name`` exists. Unregistering is immediate, but the
    map lives on until the last socket that used it is freed (closing sockets, namespaces
    being torn down) and an RCU grace period has passed."""
    deadline = time.monotonic() + timeout_s
    while name in registered_struct_ops():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def available_congestion_controls() -> list[str]:
    path = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    return path.read_text().split()


# Sessions of this process whose loader may run: a signal's clean-up stops them all
# (close_all) before the process exits, so no loader is orphaned (a zombie for init to reap).
_LIVE: set[MaxNetSession] = set()
_LIVE_LOCK = threading.Lock()


class MaxNetSession:
    """Kernel MaxNet loaded for the length of a ``with`` block, in a fresh child cgroup."""

    def __init__(self, params: MaxNetParams | None = None, cgroup: str = "xcc-maxnet-test"):
        self.params = params or MaxNetParams()
        self.cgroup_name = cgroup
        self.cgroup: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.pin: Path | None = None
        # Held while the loader starts or stops, so that a close from another thread (a
        # signal) waits for a start under way and a stop under way ends with the loader reaped.
        self._lock = threading.Lock()
        self._closed = False

    def __enter__(self) -> MaxNetSession:
        with _LIVE_LOCK:
            _LIVE.add(self)
        try:
            art = build()
        except BaseException:
            self.close()
            raise
        with self._lock:
            if self._closed:
                raise RuntimeError("kernel MaxNet: stopped before the loader started")
            self.cgroup = child_cgroup(self.cgroup_name)
            self.pin = bpffs() / self.cgroup_name
            _remove_pins(self.pin)
            log = art.build_dir / f"{self.cgroup_name}-loader.log"
            try:
                self.proc = _start(
                    art, self.params, self.cgroup, self.pin, log, die_with_parent=True
                )
            except BaseException:
                self._closed = True
                with _LIVE_LOCK:
                    _LIVE.discard(self)
                remove_cgroup(self.cgroup)
                raise
        return self

    def set_fixed_price(self, seconds: float) -> None:
        """Test mode: changes the price the receiver-side "router" stamps, while loaded."""
        assert self.pin is not None
        set_config_field(self.pin, fixed_price=price_code(seconds))

    def stats(self) -> dict[str, int]:
        assert self.pin is not None
        return read_stats(self.pin)

    def gauges(self) -> dict[str, int]:
        assert self.pin is not None
        return read_gauges(self.pin)

    def close(self, stop_timeout_s: float = 10.0, unregistered_timeout_s: float = 15.0) -> None:
        """Stops the loader and reaps it (its links detach), removes the cgroup, then waits up
        to ``unregistered_timeout_s`` for the kernel to drop the struct_ops. Once only; a second
        call (another thread) returns when the first has stopped the loader."""
        with self._lock:
            first = not self._closed
            self._closed = True
            if first and self.proc is not None:
                _stop(self.proc.pid, self.proc, stop_timeout_s)
            if first and self.cgroup is not None:
                remove_cgroup(self.cgroup)
            # Only now: a close_all meanwhile found this session and waited for the lock.
            with _LIVE_LOCK:
                _LIVE.discard(self)
        if first and unregistered_timeout_s > 0:
            wait_unregistered(unregistered_timeout_s)

    def __exit__(self, *exc: object) -> None:
        self.close()


def close_all(stop_timeout_s: float = 0.5) -> None:
    """Every session of this process closed now, for a signal's clean-up before the process
    exits: loaders stopped and reaped, cgroups removed (their processes, the routers, are
    stopped first). The kernel drops the struct_ops on its own once its sockets are freed."""
    with _LIVE_LOCK:
        sessions = list(_LIVE)
    for session in sessions:
        session.close(stop_timeout_s, unregistered_timeout_s=0.0)


def _remove_pins(pin_dir: Path) -> None:
    """Leftovers of a loader that was killed (they hold map memory, nothing registered)."""
    for name in ("config", "stats", "gauges"):
        (pin_dir / name).unlink(missing_ok=True)
    if pin_dir.exists():
        pin_dir.rmdir()


STATS = (
    "options_written",
    "options_parsed",
    "options_no_space",
    "echoed_prices",
    "echoed_spare",
    "cc_acks",
    "cc_price_law_updates",
    "cc_maxstart_updates",
)


def read_stats(
    pin_dir: Path, map_name: str = "stats", names: tuple[str, ...] = STATS
) -> dict[str, int]:
    """A program's per-CPU counters (the pinned array ``map_name``, slot k named ``names[k]``),
    summed over CPUs."""
    out = subprocess.run(
        ["bpftool", "-j", "map", "dump", "pinned", str(pin_dir / map_name)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    totals = dict.fromkeys(names, 0)
    for entry in json.loads(out):
        key = int.from_bytes(bytes(int(b, 16) for b in entry["key"]), "little")
        values = entry.get("values", [])
        total = sum(int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little") for v in values)
        if key < len(names):
            totals[names[key]] = total
    return totals


GAUGES = ("echo_price_code", "cwnd", "tau_us")


def read_gauges(pin_dir: Path) -> dict[str, int]:
    """The latest echoed price code, window and min RTT any MaxNet socket saw."""
    out = subprocess.run(
        ["bpftool", "-j", "map", "dump", "pinned", str(pin_dir / "gauges")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    values = dict.fromkeys(GAUGES, 0)
    for entry in json.loads(out):
        key = int.from_bytes(bytes(int(b, 16) for b in entry["key"]), "little")
        if key < len(GAUGES):
            values[GAUGES[key]] = int.from_bytes(
                bytes(int(b, 16) for b in entry["value"]), "little"
            )
    return values


_FIELDS = (
    "t_us",
    "maxstart",
    "alpha_q",
    "ln_xmax_bytes_q",
    "alpha_eta_t_ns",
    "fixed_price",
    "fixed_spare",
    "min_cwnd",
    "set_cc",
)


def set_config_field(pin: Path, **changes: int) -> None:
    """Rewrites fields of the loaded program's config map (pinned by the loader)."""
    key = ["0", "0", "0", "0"]
    out = subprocess.run(
        ["bpftool", "-j", "map", "lookup", "pinned", str(pin / "config"), "key", *key],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    raw = bytes(int(b, 16) for b in json.loads(out)["value"])
    values = dict(zip(_FIELDS, CONFIG_LAYOUT.unpack(raw)))
    values.update(changes)
    new = CONFIG_LAYOUT.pack(*(values[f] for f in _FIELDS))
    subprocess.run(
        ["bpftool", "map", "update", "pinned", str(pin / "config"), "key", *key, "value"]
        + [f"0x{b:02x}" for b in new],
        capture_output=True,
        text=True,
        check=True,
    )


# -- the background loader of `xcc kernel load|unload|status` ----------------------------------
def load(params: MaxNetParams, cgroup: str = DEFAULT_CGROUP) -> dict:
    """Starts the loader in the background (one at a time) and records it in STATE_DIR."""
    current = status()
    if current["loader_running"]:
        raise RuntimeError(f"kernel MaxNet is already loaded (loader pid {current['pid']})")
    art = build()
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    path = child_cgroup(cgroup)
    pin = bpffs() / cgroup
    _remove_pins(pin)
    proc = _start(art, params, path, pin, STATE_DIR / "loader.log", die_with_parent=False)
    (STATE_DIR / "state.json").write_text(
        json.dumps({"pid": proc.pid, "cgroup": str(path), "pin": str(pin)})
    )
    return status()


def unload() -> dict:
    """Stops the background loader (its links detach), removes its cgroup and pin."""
    state_file = STATE_DIR / "state.json"
    if state_file.exists():
        state = json.loads(state_file.read_text())
        _stop(int(state["pid"]))
        remove_cgroup(Path(state["cgroup"]))
        _remove_pins(Path(state["pin"]))
        state_file.unlink()
    wait_unregistered()
    return status()


def _is_loader(pid: int) -> bool:
    """A live (not zombie) maxnet_loader process with this id (ids get reused)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    state = stat.rsplit(")", 1)[-1].split()[0]
    return state not in ("Z", "X") and b"maxnet_loader" in cmdline


def status() -> dict:
    state_file = STATE_DIR / "state.json"
    state = json.loads(state_file.read_text()) if state_file.exists() else {}
    running = bool(state) and _is_loader(int(state["pid"]))
    counters = None
    if running and state.get("pin"):
        try:
            counters = read_stats(Path(state["pin"]))
        except (subprocess.CalledProcessError, json.JSONDecodeError):
            counters = None
    return {
        "loader_running": running,
        "pid": state.get("pid"),
        "cgroup": state.get("cgroup"),
        "counters": counters,
        "struct_ops": registered_struct_ops(),
        "maxnet_available": "maxnet" in available_congestion_controls(),
        # What `xcc kernel build` compiles (shipped in the package) and whether it can here.
        "sources": sorted(str(p) for p in SOURCE_DIR.glob("*.c")),
        "build_dir": str(build_dir()),
        "cannot_build": missing_prerequisites(),
    }
