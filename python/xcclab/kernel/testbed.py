"""Two network namespaces joined through a delaying TUN forwarder: the smallest path with a
real round-trip time for kernel MaxNet tests (this kernel may lack netem).

Names carry a prefix and the creating process's id so parallel runs do not collide, and
:meth:`DelayPath.__exit__` stops the forwarder and deletes both namespaces.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from .loader import in_cgroup

PROBE = Path(__file__).with_name("probe.py")
FORWARDER = Path(__file__).with_name("delay_forwarder.py")


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")


class DelayPath:
    """Namespaces ``<prefix>-a`` (10.213.1.1) and ``<prefix>-b`` (10.213.2.1), each packet
    delayed ``one_way_s`` on the way."""

    def __init__(self, one_way_s: float, prefix: str | None = None):
        self.one_way_s = one_way_s
        self.prefix = prefix or f"xcck{os.getpid()}"
        self.ns_a, self.ns_b = f"{self.prefix}-a", f"{self.prefix}-b"
        self.addr_a, self.addr_b = "10.213.1.1", "10.213.2.1"
        self.forwarder: subprocess.Popen | None = None

    def __enter__(self) -> DelayPath:
        try:
            _ip("netns", "add", self.ns_a)
            _ip("netns", "add", self.ns_b)
            self.forwarder = subprocess.Popen(
                [sys.executable, str(FORWARDER), self.ns_a, self.ns_b, repr(self.one_way_s)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert self.forwarder.stdout is not None
            if self.forwarder.stdout.readline().strip() != "ready":
                raise RuntimeError("the delay forwarder did not start")
            for ns, addr, peer in (
                (self.ns_a, self.addr_a, self.addr_b),
                (self.ns_b, self.addr_b, self.addr_a),
            ):
                _ip("-n", ns, "link", "set", "lo", "up")
                _ip("-n", ns, "link", "set", "xkt", "up")
                _ip("-n", ns, "addr", "add", f"{addr}/32", "dev", "xkt")
                _ip("-n", ns, "route", "add", f"{peer}/32", "dev", "xkt")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.forwarder is not None:
            # Let the last FIN/ACKs through: a socket left in LAST_ACK would retransmit into a
            # deleted namespace for minutes, keeping the maxnet struct_ops map alive.
            time.sleep(6 * self.one_way_s + 0.05)
            self.forwarder.terminate()
            try:
                self.forwarder.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.forwarder.kill()
                self.forwarder.wait()
        for ns in (self.ns_a, self.ns_b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)

    def spawn(self, ns: str, args: list[str], cgroup: Path) -> subprocess.Popen:
        """Runs the probe script with ``args`` in namespace ``ns`` inside ``cgroup``."""
        cmd = ["ip", "netns", "exec", ns, sys.executable, str(PROBE), *args]
        return subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=in_cgroup(cgroup),
        )
