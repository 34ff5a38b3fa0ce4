"""Kernel DCTCP for kernels without the ``tcp_dctcp`` module: the BPF struct_ops
``xcc_dctcp`` (``src/dctcp.bpf.c``) registered by ``ca_loader`` for the length of a ``with``
block, its counters pinned under ``/sys/fs/bpf/<name>/`` while it runs.

As with MaxNet (:mod:`.loader`), registration is a struct_ops link that only the loader's
process holds: when it exits, however it exits, the kernel unregisters ``xcc_dctcp`` (the map
itself goes once the last socket that used it is freed).
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from . import loader as _loader
from .build import build

#: The congestion control's name in Linux (``tcp_available_congestion_control``, ``ss -i``);
#: not "dctcp", so that it never collides with the module on kernels that have one.
NAME = "xcc_dctcp"
#: ``enum dctcp_stat`` of ``src/dctcp.bpf.c``, in order.
STATS = (
    "sockets",
    "sockets_without_ecn",
    "ce_received",
    "no_ce_received",
    "state_change_acks",
    "windows",
    "alpha_sum_1024",
    "delivered",
    "delivered_ce",
    "cuts",
    "losses",
    "cwnd_at_cuts_sum",
    "ssthresh_repairs",
)


def summary(stats: dict[str, int]) -> dict[str, float | int | None]:
    """The counters with what they mean: the mean alpha over the windows counted (alpha is
    updated once per window of data), the fraction of delivered packets echoed CE, and the mean
    window (segments) a cut started from."""
    windows, delivered, cuts = stats["windows"], stats["delivered"], stats["cuts"]
    return {
        **stats,
        "mean_cwnd_at_cut": stats["cwnd_at_cuts_sum"] / cuts if cuts else None,
        "mean_alpha": stats["alpha_sum_1024"] / 1024 / windows if windows else None,
        "echoed_ce_fraction": stats["delivered_ce"] / delivered if delivered else None,
    }


def difference(later: dict[str, int], earlier: dict[str, int]) -> dict[str, int]:
    """Counters accumulated between two readings."""
    return {k: later[k] - earlier.get(k, 0) for k in STATS}


def read_stats(pin_dir: Path) -> dict[str, int]:
    """The program's counters, summed over CPUs."""
    return _loader.read_stats(pin_dir, "dctcp_stats", STATS)


def wait_unregistered(timeout_s: float = 15.0) -> bool:
    """Waits until the kernel holds no struct_ops named :data:`NAME` (its sockets freed)."""
    return _loader.wait_unregistered(timeout_s, NAME)


class DctcpSession:
    """``xcc_dctcp`` registered for the length of a ``with`` block."""

    def __init__(self, pin_name: str = "xcc-dctcp"):
        self.pin: Path | None = None
        self.pin_name = pin_name
        self.proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._closed = False

    def __enter__(self) -> DctcpSession:
        art = build()
        with self._lock:
            self.pin = _loader.bpffs() / self.pin_name
            _remove_pin(self.pin)
            log = art.build_dir / f"{self.pin_name}-loader.log"
            cmd = [
                str(art.ca_loader),
                f"--obj={art.dctcp_obj}",
                f"--struct-ops={NAME}",
                f"--pin-dir={self.pin}",
                "--pin=dctcp_stats",
                "--die-with-parent",
            ]
            with open(log, "w") as err:
                proc = subprocess.Popen(
                    cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True
                )
            assert proc.stdout is not None
            if not proc.stdout.readline().startswith("ready"):
                proc.wait(timeout=10)
                raise RuntimeError(
                    f"ca_loader ({NAME}) failed (exit {proc.returncode}): "
                    f"{log.read_text().strip()[-2000:]}"
                )
            self.proc = proc
        # Stopped with the MaxNet sessions by a signal's clean-up (xcclab.emu).
        with _loader._LIVE_LOCK:
            _loader._LIVE.add(self)  # type: ignore[arg-type]
        return self

    def stats(self) -> dict[str, int]:
        assert self.pin is not None
        return read_stats(self.pin)

    def close(self, stop_timeout_s: float = 10.0, unregistered_timeout_s: float = 15.0) -> None:
        """Stops the loader (the link detaches) and waits for the kernel to drop the map."""
        with self._lock:
            first = not self._closed
            self._closed = True
            if first and self.proc is not None:
                _loader._stop(self.proc.pid, self.proc, stop_timeout_s)
            with _loader._LIVE_LOCK:
                _loader._LIVE.discard(self)  # type: ignore[arg-type]
        if first and unregistered_timeout_s > 0:
            wait_unregistered(unregistered_timeout_s)

    def __exit__(self, *exc: object) -> None:
        self.close()


def _remove_pin(pin_dir: Path) -> None:
    """Leftovers of a loader that was killed (map memory only, nothing registered)."""
    (pin_dir / "dctcp_stats").unlink(missing_ok=True)
    if pin_dir.exists():
        pin_dir.rmdir()
