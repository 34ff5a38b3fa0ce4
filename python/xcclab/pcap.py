"""Write packet captures in the classic pcap format (what ``tcpdump -w`` writes).

The simulator encodes each packet departing the captured link as an IPv4 datagram (IPv4, UDP,
xcclab's congestion shim and segment header; see ``crates/xcc-build/src/capture.rs`` and
``docs/pcap.md``); this module only frames those bytes. Choices:

- link type ``LINKTYPE_RAW`` (101): the packets start with the IP header, no fake Ethernet;
- nanosecond timestamps (magic ``0xa1b23c4d``), since simulated time is integer nanoseconds;
  the capture starts at the Unix epoch (simulated time 0), so tools show seconds since start;
- headers only: each record's captured length is the header bytes, its original length the
  whole datagram (as ``tcpdump -s``), so captures stay small and the IP/UDP lengths stay true.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from pathlib import Path

MAGIC_NANOSECONDS = 0xA1B23C4D
LINKTYPE_RAW = 101
SNAPLEN = 65535

#: (time in ns, captured bytes, original length), as the native module returns them.
Record = tuple[int, bytes, int]


def pcap_bytes(records: Iterable[Record]) -> bytes:
    """The whole pcap file for ``records`` (little-endian, nanosecond resolution)."""
    parts = [struct.pack("<IHHiIII", MAGIC_NANOSECONDS, 2, 4, 0, 0, SNAPLEN, LINKTYPE_RAW)]
    for time_ns, data, orig_len in records:
        sec, nsec = divmod(int(time_ns), 1_000_000_000)
        parts.append(struct.pack("<IIII", sec, nsec, len(data), int(orig_len)))
        parts.append(bytes(data))
    return b"".join(parts)


def write_pcap(path: str | os.PathLike[str], records: Iterable[Record]) -> Path:
    """Write ``records`` to ``path`` as a pcap file; return the path."""
    path = Path(path)
    path.write_bytes(pcap_bytes(records))
    return path


def read_pcap(path: str | os.PathLike[str]) -> list[Record]:
    """Read a file written by :func:`write_pcap` back into records (for tests and checks)."""
    data = Path(path).read_bytes()
    magic, _major, _minor, _zone, _sig, _snap, linktype = struct.unpack_from("<IHHiIII", data)
    if magic != MAGIC_NANOSECONDS or linktype != LINKTYPE_RAW:
        raise ValueError(f"{path}: not an xcclab pcap (magic {magic:#x}, link type {linktype})")
    out, offset = [], 24
    while offset < len(data):
        sec, nsec, incl, orig = struct.unpack_from("<IIII", data, offset)
        offset += 16
        out.append((sec * 1_000_000_000 + nsec, data[offset : offset + incl], orig))
        offset += incl
    return out
