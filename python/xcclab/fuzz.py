"""The scenario fuzzer: generated *valid* scenarios, each run under a time and a memory limit.

``python -m xcclab.fuzz --cases N --seed S`` (``make fuzz``) and ``tests/python/test_fuzz.py``
(a few hundred seeded cases in CI) run the same code. A case is a random small scenario:

- **topology**: 1-4 routers in a chain plus random extra links, 1-6 flows between their own
  hosts, single-homed and sometimes dual-homed;
- **links**: rates 1 Mbit/s to 10 Gbit/s, delays 0 to 50 ms, buffers from one packet to
  10,000 packets, a few kilobytes or unlimited, lossless or lossy (0.1 % to 5 %), jitter;
- **algorithms**: every registered congestion controller and queue (``_native``'s
  registries, so a new algorithm is fuzzed without touching this file), explicit ones on
  their own routers' links, and their options where they change the mechanism (MaxNet's
  ``maxstart`` and ``pace``);
- **traffic**: simultaneous or staggered starts, stops, sized flows, CBR flows, handshakes on
  or off, SACK, ECN and delayed ACKs on or off; 100 ms to 2 s simulated.

Each case must: finish without a panic, an abort or a hang (time limit); stay under
:func:`memory_bound` (the child's peak resident memory); pass the simulator's end-of-run
invariants (a broken one fails the run); keep every flow's retransmission timer honest: no
flow may have data outstanding with no ACK of new data for longer than its RTO without the
timer firing (the flows table's ``rto_overdue``, counted by the transport, must be 0); and
leave no flow starved or window-capped silently: every flow that delivered nothing, got under
a tenth of its max-min share, or was held back by the transport's window cap
(``window_capped``), must appear in the run's warnings
(:meth:`xcclab.results.RunResult.warnings`). Cases run in batches in child processes
(:mod:`xcclab.isolated`: starting Python with polars costs a second or two per process); a
batch that dies or passes its time limit is rerun case by case to name the culprit.

Failures found so far, each now a regression test (:data:`REGRESSIONS`, run by
``tests/python/test_fuzz.py``, and a unit test where the cause lies):

- seed 27: an RCP flow stopped at 1.5 s with everything acknowledged hung the run: its probe
  was due but might not be sent, and the sender still asked to be woken at that past time
  (``transport/sender.rs``, ``a_stopped_rate_based_flow_asks_for_no_probe_wake_up``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any

#: Per-case time limit (seconds of wall time, on a loaded two-core machine).
CASE_SECONDS = 60.0
#: Cases per child process, and the batch's time limit: a batch past it (a hang, most likely)
#: is rerun case by case under :data:`CASE_SECONDS` each, which names the culprit.
BATCH = 10
BATCH_SECONDS = 180.0
#: Memory a case may use: a fixed base for Python, polars and the native module, plus this per
#: packet the links can hold (a queued packet, its event and its bookkeeping), see
#: :func:`memory_bound`.
BASE_BYTES = 700 << 20
BYTES_PER_QUEUED_PACKET = 1024
BYTES_PER_FLOW = 256 << 10

#: Seeds of cases that once failed (see the module doc).
REGRESSIONS = (27,)

RATES = ["1Mbps", "10Mbps", "100Mbps", "1Gbps", "10Gbps"]
DELAYS = ["0s", "100us", "1ms", "10ms", "50ms"]
BUFFERS = ["1pkt", "5pkt", "100pkt", "1000pkt", "10000pkt", "3000B", "unlimited"]
LOSSES = [0.0, 0.0, 0.0, 0.001, 0.05]
DURATIONS = ["100ms", "500ms", "1s", "2s"]
#: Options worth varying, per controller (the rest keep their defaults).
CC_OPTIONS: dict[str, dict[str, list[Any]]] = {
    "maxnet": {"maxstart": [True, False], "pace": [False, True]},
}


def registries() -> tuple[list[str], list[str]]:
    """(congestion controllers, queues) from the native module's registries."""
    from ._native import algorithm_names

    names = dict(algorithm_names())
    return list(names["host"]), list(names["link"])


def plain_queues() -> list[str]:
    """Queues that serve any controller: link algorithms with no sender of their own (an
    explicit controller gets its own queue as well)."""
    hosts, queues = registries()
    return [q for q in queues if q not in hosts]


@dataclass
class Case:
    """One generated scenario and what the checks need to know about it."""

    seed: int
    scenario: dict[str, Any]
    notes: dict[str, Any] = field(default_factory=dict)


def plain_queue(kind: str) -> Any:
    """A queue any controller can cross, with the parameters it requires."""
    if kind == "red":
        return {"kind": "red", "min_th": "5pkt", "max_th": "15pkt"}
    if kind == "markmax":
        return {"kind": "markmax", "variant": "b", "theta": "20pkt"}
    return kind


def _rate_bps(text: str) -> float:
    return float(text[:-4]) * {"M": 1e6, "G": 1e9}[text[-4]]


def generate(seed: int, ccs: list[str], queues: list[str]) -> Case:
    """A random valid scenario (see the module doc); the same seed gives the same scenario."""
    rng = random.Random(seed)
    cc = ccs[seed % len(ccs)]  # every controller equally often, in turn
    explicit = cc in queues and cc not in plain_queues()
    duration = rng.choice(DURATIONS)
    n_routers = rng.randint(1, 4)
    n_flows = rng.randint(1, 6)
    routers = [f"r{k}" for k in range(1, n_routers + 1)]
    sc: dict[str, Any] = {"name": f"fuzz-{seed}", "duration": duration, "seed": seed}
    sc["router"] = [{"name": r} for r in routers]
    hosts = [f"s{i}" for i in range(1, n_flows + 1)] + [f"d{i}" for i in range(1, n_flows + 1)]
    sc["host"] = [{"name": h} for h in hosts]
    links: list[dict[str, Any]] = []
    queued = 0.0
    seconds = float(duration[:-2]) / 1e3 if duration.endswith("ms") else float(duration[:-1])

    def link(a: str, b: str, core: bool) -> None:
        nonlocal queued
        rate = rng.choice(RATES)
        entry: dict[str, Any] = {
            "between": [a, b],
            "rate": rate,
            "delay": rng.choice(DELAYS),
            "buffer": rng.choice(BUFFERS),
            # INT-capable ports everywhere: senders that read telemetry (HPCC, PowerTCP) need one
            # on their route, and a port stamps nothing on a packet without the INT header
            "int": True,
        }
        if explicit:  # every link: a route must cross one, whichever links it takes
            entry["queue"] = cc
        elif core:
            entry["queue"] = plain_queue(rng.choice(plain_queues()))
        loss = rng.choice(LOSSES)
        if loss:
            entry["loss"] = loss
        if rng.random() < 0.1:
            entry["jitter"] = "1ms"
        links.append(entry)
        # Packets the link can hold in each direction: its buffer, or all it could carry.
        carried = _rate_bps(rate) * seconds / (8 * 1500)
        buf = entry["buffer"]
        cap = carried if buf == "unlimited" else float(buf[:-3]) if buf.endswith("pkt") else 2
        queued += 2 * min(cap, carried + 10)

    for a, b in zip(routers, routers[1:]):
        link(a, b, True)
    for _ in range(rng.randint(0, n_routers - 1)):
        a, b = rng.sample(routers, 2) if n_routers > 1 else (routers[0], routers[0])
        if a != b:
            link(a, b, True)
    for h in hosts:
        for r in rng.sample(routers, 2 if n_routers > 1 and rng.random() < 0.15 else 1):
            link(h, r, False)
    sc["link"] = links
    staggered = rng.random() < 0.5
    transport: dict[str, Any] = {}
    if rng.random() < 0.5:
        transport["connection"] = "open"
    for key in ("sack", "ecn"):
        if rng.random() < 0.3:
            transport[key] = rng.random() < 0.5
    if rng.random() < 0.3:
        transport["delayed_ack"] = rng.choice([False, "linux", "40ms"])
    flows = []
    for i in range(1, n_flows + 1):
        flow: dict[str, Any] = {"name": f"f{i}", "src": f"s{i}", "dst": f"d{i}"}
        if staggered:
            flow["start"] = f"{rng.randint(0, int(seconds * 500))}ms"
        if rng.random() < 0.1:
            flow.update(kind="cbr", rate=rng.choice(RATES[:3]), packet_size="1000B")
        else:
            options = {k: rng.choice(v) for k, v in CC_OPTIONS.get(cc, {}).items()}
            flow["cc"] = {"kind": cc, **options} if options else cc
            if rng.random() < 0.15:
                flow["size"] = rng.choice(["1B", "1460B", "100KB", "10MB"])
            if transport:
                flow["transport"] = dict(transport)
        if rng.random() < 0.1:
            flow["stop"] = f"{int(seconds * 1000 * 0.75)}ms"
        flows.append(flow)
    sc["flow"] = flows
    sc["metrics"] = {"interval": rng.choice(["10ms", "100ms"])}
    return Case(seed, sc, {"cc": cc, "queued_packets": queued, "flows": n_flows})


def memory_bound(case: Case) -> int:
    """Bytes of resident memory a case may use: :data:`BASE_BYTES` plus
    :data:`BYTES_PER_QUEUED_PACKET` per packet its links can hold (a buffer, or for an
    unlimited one all the link carries in the run) plus :data:`BYTES_PER_FLOW` per flow."""
    notes = case.notes
    return int(
        BASE_BYTES
        + BYTES_PER_QUEUED_PACKET * notes["queued_packets"]
        + BYTES_PER_FLOW * notes["flows"]
    )


def flow_problem(row: dict[str, Any], warned: str, duration: float) -> str | None:
    """What is wrong with one row of a case's flows table, given the run's warnings (joined)
    and its duration: a retransmission timer that did not fire (``rto_overdue``, RFC 6298
    section 5), or a window cap or a starvation the warnings do not name; None if nothing."""
    name = row["name"]
    if row.get("rto_overdue"):
        return (
            f"flow {name!r}: its retransmission timer did not fire {row['rto_overdue']} times "
            "data went unacknowledged for longer than its RTO"
        )
    said = f"flow {name!r}" in warned
    if row.get("window_capped") and not said:
        return f"flow {name!r} held by the window cap silently"
    if (row.get("start_s") or 0.0) >= duration:
        return None
    if is_starved(row) and not said:
        return f"flow {name!r} starved silently"
    return None


def is_starved(row: dict[str, Any]) -> bool:
    """Delivered nothing, or under a tenth of its max-min share over the second half."""
    late, share = row.get("late_rate_bps"), row.get("maxmin_bps")
    return not row.get("bytes_delivered") or bool(late is not None and share and late < 0.1 * share)


def check(case: Case) -> dict[str, Any]:
    """Run one case in this process; the findings (nothing raised for a failing case)."""
    import resource

    from .results import run

    t0 = time.monotonic()
    try:
        res = run(case.scenario, seed=case.seed, series=True)
    except ValueError as exc:  # the generator made an invalid scenario: its bug, reported
        return {"seed": case.seed, "problem": f"rejected as invalid: {exc}"}
    except RuntimeError as exc:  # a broken end-of-run invariant, or another run failure
        return {"seed": case.seed, "problem": f"run failed: {exc}"}
    wall = time.monotonic() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    warned = " ".join(res.warnings())
    duration = res.scenario["duration_ns"] * 1e-9
    rows = list(res.flows.iter_rows(named=True))
    for row in rows:
        problem = flow_problem(row, warned, duration)
        if problem:
            return {"seed": case.seed, "problem": problem}
    return {
        "seed": case.seed,
        "problem": None,
        "wall_s": wall,
        "peak_rss": peak,
        "starved": [
            r["name"] for r in rows if (r.get("start_s") or 0.0) < duration and is_starved(r)
        ],
        "capped": [r["name"] for r in rows if r.get("window_capped")],
        "timeouts": sum(r.get("timeouts") or 0 for r in rows),
        "events": res.run_info["stats"]["events"],
    }


def check_batch(cases: list[Case]) -> list[dict[str, Any]]:
    """Run cases one after another in this (child) process; each result carries the process's
    peak resident memory so far, and the largest bound of the cases so far."""
    out, bound = [], 0
    for case in cases:
        bound = max(bound, memory_bound(case))
        found = check(case)
        found["bound"] = bound
        out.append(found)
    return out


def fuzz(cases: int, seed: int = 0, jobs: int = 1, log: Any = None) -> dict[str, Any]:
    """Generate and run ``cases`` cases from ``seed``; a summary with every failure."""
    from .isolated import Limits, run_isolated

    ccs, queues = registries()
    generated = [generate(seed + k, ccs, queues) for k in range(cases)]
    batches = [generated[k : k + BATCH] for k in range(0, len(generated), BATCH)]
    limits = Limits(seconds=BATCH_SECONDS)
    results: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    reported = [0]
    t0 = time.monotonic()

    def done(i: int, outcome: Any) -> None:
        if outcome.error is None:
            results.extend(outcome.result)
            for r in outcome.result:
                if r["problem"] is None and r["peak_rss"] > r["bound"]:
                    r["problem"] = (
                        f"peak memory {r['peak_rss']:,} B over the bound {r['bound']:,} B"
                    )
                if r["problem"]:
                    failures.append({"seed": r["seed"], "problem": r["problem"]})
        else:  # the batch died: rerun its cases one by one to name the culprit
            single = run_isolated(
                check_batch,
                [[c] for c in batches[i]],
                limits=Limits(seconds=CASE_SECONDS, memory_bytes=None),
            )
            for c, o in zip(batches[i], single):
                if o.error is not None:
                    failures.append({"seed": c.seed, "problem": o.error})
                else:
                    results.extend(o.result)
                    failures.extend(
                        {"seed": r["seed"], "problem": r["problem"]}
                        for r in o.result
                        if r["problem"]
                    )
        if log:
            seeds = [c.seed for c in batches[i]]
            print(
                f"fuzz: batch {i + 1}/{len(batches)} (seeds {seeds[0]}-{seeds[-1]}) done, "
                f"{len(failures)} failures so far, {time.monotonic() - t0:.0f} s",
                file=log,
                flush=True,
            )
            for f in failures[reported[0] :]:
                print(f"fuzz: FAILED seed {f['seed']}: {f['problem']}", file=log, flush=True)
            reported[0] = len(failures)

    run_isolated(check_batch, batches, jobs=jobs, limits=limits, on_done=done)
    ok = [r for r in results if r["problem"] is None]
    by_cc: dict[str, int] = {}
    for c in generated:
        by_cc[c.notes["cc"]] = by_cc.get(c.notes["cc"], 0) + 1
    return {
        "cases": cases,
        "seed": seed,
        "passed": len(ok),
        "failures": sorted(failures, key=lambda f: f["seed"]),
        "by_cc": by_cc,
        "starved_with_warning": sum(1 for r in ok if r["starved"]),
        "window_capped_with_warning": sum(1 for r in ok if r["capped"]),
        "timeouts_checked": sum(r["timeouts"] for r in ok),
        "max_case_wall_s": max((r["wall_s"] for r in ok), default=0.0),
        "max_peak_rss": max((r["peak_rss"] for r in ok), default=0),
        "events": sum(r["events"] for r in ok),
        "wall_s": time.monotonic() - t0,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m xcclab.fuzz", description=__doc__.split("\n")[0])
    p.add_argument("--cases", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--show", type=int, metavar="SEED", help="print the scenario of one case")
    args = p.parse_args(argv)
    if args.show is not None:
        ccs, queues = registries()
        print(json.dumps(generate(args.show, ccs, queues).scenario, indent=2))
        return 0
    summary = fuzz(args.cases, args.seed, args.jobs, log=sys.stderr)
    print(json.dumps(summary, indent=2))
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
