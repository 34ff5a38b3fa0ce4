"""A TUN forwarder between two network namespaces that delays every packet by a fixed time.

    python delay_forwarder.py NS_A NS_B ONE_WAY_DELAY_S

Opens a TUN device ``xkt`` in each namespace, prints ``ready`` and forwards packets from one to
the other after the delay (per direction, first in first out), until stdin closes or a signal.
The packets are not changed. It stands in for a router where the kernel has no netem (the kernel
MaxNet tests need a real round-trip time); a standalone script so it runs with any Python.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import fcntl
import os
import select
import signal
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
CLONE_NEWNET = 0x40000000
DEVICE = "xkt"


def open_tun_in(ns: str) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    here = os.open("/proc/self/ns/net", os.O_RDONLY)
    there = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        if libc.setns(there, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {ns}")
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", DEVICE.encode(), IFF_TUN | IFF_NO_PI))
        if libc.setns(here, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns back")
        return fd
    finally:
        os.close(here)
        os.close(there)


def main() -> int:
    ns_a, ns_b, delay_s = sys.argv[1], sys.argv[2], float(sys.argv[3])
    fds = [open_tun_in(ns_a), open_tun_in(ns_b)]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    queues: list[collections.deque] = [collections.deque(), collections.deque()]
    print("ready", flush=True)
    delay_ns = int(delay_s * 1e9)
    watch = [fds[0], fds[1], sys.stdin.fileno()]
    while True:
        now = time.monotonic_ns()
        for i in (0, 1):  # queue i holds packets read from fds[i], to be written to the other
            q = queues[i]
            while q and q[0][0] <= now:
                # A device that is down or full loses the packet.
                with contextlib.suppress(OSError):
                    os.write(fds[1 - i], q.popleft()[1])
        due = [q[0][0] for q in queues if q]
        timeout = max(0.0, (min(due) - time.monotonic_ns()) / 1e9) if due else 1.0
        ready, _, _ = select.select(watch, [], [], timeout)
        now = time.monotonic_ns()
        for fd in ready:
            if fd == watch[2]:
                if not os.read(fd, 4096):
                    return 0
                continue
            i = fds.index(fd)
            for _ in range(64):
                try:
                    queues[i].append((now + delay_ns, os.read(fd, 65536)))
                except BlockingIOError:
                    break


if __name__ == "__main__":
    raise SystemExit(main())
