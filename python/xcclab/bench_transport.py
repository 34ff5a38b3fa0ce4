"""The ``xcc`` load of ``xcc bench --emu``: xcclab's own transport over UDP at the link's rate.

Two RCP flows (10 ms RTT) through one link of the bench's rate with an RCP router (1 ms,
5000-packet buffer): the first from 0 s, the second joining at :data:`JOIN_S` at the rate the
router then advertises (the whole link), so for a round trip the hosts offer twice the link's
rate; measured over the last ``seconds`` of the run, from :data:`WINDOW_START_S` on. RCP is
the load because its sources send exactly at the rate the router stamps, so the transport's
pacing can be checked against a number the router computed:

- **pacing error**: each flow's delivered payload rate over the window against the router's
  advertised rate R (the mean of the bottleneck's sampled R over the window) times the payload
  share of a data packet, minus 1. Target (issue 18): within 0.5 %.
- **against the simulator**: the flows' total delivered payload, emulated / simulated - 1, on
  the same scenario (the router's R itself depends on the queue the real hosts build).
- the router's delay error (p50, p99 of how late each packet left), kernel-side drops (a run
  with any fails, and is recorded as failed with their number), the router's CPU share and the
  transport's batching (datagrams and ACKs sent several to a system call).
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import Any

JOIN_S = 1.0
WINDOW_START_S = 2.0
RTT_S = 0.010
BUFFER = "5000pkt"


def scenario(rate_mbps: int, seconds: float):
    """The bench's scenario at ``rate_mbps``, measured over the last ``seconds``."""
    from .reproduce.common import explicit as _xcc

    p = _rcp()
    flows = [_xcc.Flow("f1", RTT_S), _xcc.Flow("f2", RTT_S, start_s=JOIN_S)]
    return _xcc.dumbbell(
        p,
        f"bench-xcc-{rate_mbps}",
        flows,
        duration_s=WINDOW_START_S + seconds,
        rate=f"{rate_mbps}Mbps",
        buffer=BUFFER,
    )


def _rcp():
    from .reproduce.common import explicit as _xcc

    return _xcc.by_name("rcp").on_wire()


def _window_rates(result: Any, t0: float, t1: float) -> list[float]:
    """Each flow's delivered payload rate (bit/s) between the samples nearest ``t0`` and
    ``t1``."""
    import polars as pl

    fs = result.flow_series
    out = []
    for fid in sorted(set(fs["flow_id"].to_list())):
        s = fs.filter(pl.col("flow_id") == fid).sort("time_s")
        a = s.filter(pl.col("time_s") >= t0 - 1e-9).head(1)
        b = s.filter(pl.col("time_s") <= t1 + 1e-9).tail(1)
        dt = float(b["time_s"][0] - a["time_s"][0])
        out.append(8 * float(b["delivered_bytes"][0] - a["delivered_bytes"][0]) / dt)
    return out


def _advertised_rate(result: Any, t0: float, t1: float) -> float:
    """The bottleneck's mean advertised rate R (bit/s) over the window."""
    import polars as pl

    from .reproduce.common import explicit as _xcc

    link = result.link(_xcc.BOTTLENECK)
    ls = result.link_series.filter(
        (pl.col("link_id") == link["link_id"]) & (pl.col("time_s") > t0) & (pl.col("time_s") <= t1)
    )
    return float(ls["gauge"].mean())


def pacing_errors(
    rates_bps: list[float], advertised_bps: float, payload_share: float
) -> list[float]:
    """Each flow's rate against the advertised rate's payload, minus 1."""
    return [r / (advertised_bps * payload_share) - 1 for r in rates_bps]


_DROPS = re.compile(r"dropped (\d+) packet")


def measure_run(rate_mbps: int, seconds: float) -> dict[str, Any]:
    """One run of the ``xcc`` load: a record with the keys of the router bench's runs
    (``mode``, ``rate_mbps``, ``achieved_mbps``, ``delay_error_us``, kernel drops, CPU share,
    load average) and this load's own (``pacing_error`` per flow, ``sim_error``)."""
    import xcclab
    from xcclab.emu import emulate

    from .reproduce.common import explicit as _xcc

    sc = scenario(rate_mbps, seconds)
    p = _rcp()
    t0, t1 = WINDOW_START_S, WINDOW_START_S + seconds
    rec: dict[str, Any] = {
        "mode": "xcc",
        "rate_mbps": rate_mbps,
        "load_average_before": list(os.getloadavg()),
        "delay_error_us": {"p50": None, "p90": None, "p99": None, "p999": None},
        "kernel_tx_dropped": 0,
        "kernel_rx_dropped": 0,
    }
    with tempfile.TemporaryDirectory(prefix="xcc-bench-") as tmp:
        try:
            emu = emulate(sc, out=f"{tmp}/run")
        except RuntimeError as exc:
            m = _DROPS.search(str(exc))
            rec["failed"] = str(exc)
            rec["kernel_tx_dropped"] = int(m.group(1)) if m else 0
            return rec
    sim = xcclab.run(sc, progress=False)
    info = emu.run_info.get("emu", {})
    rates = _window_rates(emu, t0, t1)
    sim_rates = _window_rates(sim, t0, t1)
    advertised = _advertised_rate(emu, t0, t1)
    errors = pacing_errors(rates, advertised, p.payload_share)
    link = emu.link(_xcc.BOTTLENECK)
    rec.update(
        {
            "achieved_mbps": sum(rates) / p.payload_share / 1e6,
            "goodput_mbps": sum(rates) / 1e6,
            "advertised_mbps": advertised / 1e6,
            "pacing_error": errors,
            "worst_pacing_error": max(errors, key=abs),
            "sim_error": sum(rates) / sum(sim_rates) - 1,
            "rate_error": None,
            "delay_error_us": {
                "p50": info.get("lateness_p50_us"),
                "p90": None,
                "p99": info.get("lateness_p99_us"),
                "p999": None,
            },
            "kernel_tx_dropped": int(info.get("kernel_tun_tx_dropped", 0)),
            "kernel_rx_dropped": int(info.get("kernel_tun_rx_dropped", 0)),
            "router_cpu_share": info.get("router_cpu_share"),
            "link_drops": int(link["drops"]),
            "transport_data_batched": info.get("transport_data_batched"),
            "transport_acks_batched": info.get("transport_acks_batched"),
            "host_wake_late_max_us": info.get("host_wake_late_max_us"),
            "rt_throttling_lifted": info.get("rt_throttling_lifted"),
        }
    )
    return rec
