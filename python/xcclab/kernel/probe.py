"""A bulk TCP transfer that samples the sender's ``tcp_info`` (cwnd, min RTT, MSS).

    python -m xcclab.kernel.probe serve --port P --seconds S
    python -m xcclab.kernel.probe send --to ADDR --port P --seconds S [--cc maxnet]

Both print one JSON object on stdout. The sender samples every ``--interval`` while it sends.
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import threading
import time

TCP_INFO_LEN = 232
# Offsets in struct tcp_info (include/uapi/linux/tcp.h).
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
OFF_SND_MSS, OFF_RTT, OFF_SND_CWND, OFF_MIN_RTT = 16, 68, 80, 148
OFF_BYTES_ACKED, OFF_DELIVERY_RATE = 120, 160


def tcp_info(sock: socket.socket) -> dict:
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)

    def u32(off: int) -> int:
        return _U32.unpack_from(raw, off)[0]

    return {
        "snd_mss": u32(OFF_SND_MSS),
        "rtt_us": u32(OFF_RTT),
        "cwnd": u32(OFF_SND_CWND),
        "min_rtt_us": u32(OFF_MIN_RTT),
        "bytes_acked": _U64.unpack_from(raw, OFF_BYTES_ACKED)[0],
        "delivery_rate_Bps": _U64.unpack_from(raw, OFF_DELIVERY_RATE)[0],
    }


def serve(port: int, seconds: float) -> dict:
    with socket.create_server(("0.0.0.0", port)) as srv:
        srv.settimeout(seconds + 10)
        conn, _ = srv.accept()
        total = 0
        with conn:
            conn.settimeout(seconds + 10)
            while True:
                chunk = conn.recv(1 << 20)
                if not chunk:
                    break
                total += len(chunk)
    return {"bytes": total}


def send(to: str, port: int, seconds: float, cc: str | None, interval: float) -> dict:
    sock = None
    for _ in range(100):  # the server may still be starting
        try:
            sock = socket.create_connection((to, port), timeout=5)
            break
        except ConnectionRefusedError:
            time.sleep(0.05)
    if sock is None:
        raise SystemExit(f"probe: cannot connect to {to}:{port}")
    if cc:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    used = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0]
    samples: list[dict] = []
    start = time.monotonic()
    stop = threading.Event()

    def sampler() -> None:
        while not stop.is_set():
            info = tcp_info(sock)
            info["t"] = time.monotonic() - start
            samples.append(info)
            stop.wait(interval)

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    block = b"\0" * (1 << 16)
    sent = 0
    sock.settimeout(1.0)
    while time.monotonic() - start < seconds:
        try:
            sent += sock.send(block)
        except TimeoutError:
            continue
    stop.set()
    thread.join()
    final = tcp_info(sock)
    sock.shutdown(socket.SHUT_WR)
    sock.close()
    return {"cc": used.decode(), "bytes_sent": sent, "samples": samples, "final": final}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="xcclab.kernel.probe")
    sub = p.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--seconds", type=float, required=True)
    c = sub.add_parser("send")
    c.add_argument("--to", required=True)
    c.add_argument("--port", type=int, required=True)
    c.add_argument("--seconds", type=float, required=True)
    c.add_argument("--cc")
    c.add_argument("--interval", type=float, default=0.01)
    a = p.parse_args(argv)
    if a.mode == "serve":
        result = serve(a.port, a.seconds)
    else:
        result = send(a.to, a.port, a.seconds, a.cc, a.interval)
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
