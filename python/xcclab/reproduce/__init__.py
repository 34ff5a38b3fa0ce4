"""Paper reproductions: one module per experiment id of ``experiments.md``.

Each implemented experiment is a module with ``run(out_dir, quick=False) -> Path`` that writes
``report.md`` (the paper's numbers beside ours), ``metrics.json`` and figures into ``out_dir``
(atomically), with the simulator runs under ``out_dir/runs/``. ``quick=True`` shortens the
runs for tests; its numbers are not meant to match the paper.

Adding an experiment: write ``xcclab/reproduce/<id with underscores>.py`` with ``TITLE`` and
``run``, then set its entry below to ``implemented`` with the module name.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    seed_paper: str  # "000" .. "004"
    status: str  # "implemented" | "planned"
    module: str | None = None  # under xcclab.reproduce

    def load(self) -> ModuleType:
        if self.module is None:
            raise KeyError(f"experiment {self.id!r} is planned, not implemented yet")
        return importlib.import_module(f"{__name__}.{self.module}")


_P = "planned"

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "maxnet-two-link",
        "MaxNet multi-flow, multi-link (Figs 5-8)",
        "000",
        "implemented",
        "maxnet_two_link",
    ),
    Experiment(
        "maxnet-cbr", "MaxNet with CBR cross traffic (Fig. 9)", "000", "implemented", "maxnet_cbr"
    ),
    Experiment(
        "rcp-instability-1",
        "RCP's unstable network, N=1: RCP and MaxNet (Figs 12-16)",
        "000",
        "implemented",
        "rcp_instability_1",
    ),
    Experiment(
        "rcp-instability-9",
        "RCP's unstable network, N=9: RCP and MaxNet (Figs 12-16)",
        "000",
        "implemented",
        "rcp_instability_9",
    ),
    Experiment(
        "rcp-instability-49",
        "RCP's unstable network, N=49: RCP and MaxNet (Figs 12-16)",
        "000",
        "implemented",
        "rcp_instability_49",
    ),
    Experiment(
        "maxnet-stability",
        "MaxNet parameter design (Sec. VIII, Alg. 3)",
        "000",
        "implemented",
        "maxnet_stability",
    ),
    Experiment(
        "maxnet-encoding", "MaxNet price encoding (Sec. V)", "000", "implemented", "maxnet_encoding"
    ),
    Experiment(
        "mice-http-50", "MaxNet vs Reno/RED with 50 HTTP mice", "001", "implemented", "mice_http_50"
    ),
    Experiment(
        "mice-http-200",
        "MaxNet vs Reno/RED with 200 HTTP mice",
        "001",
        "implemented",
        "mice_http_200",
    ),
    Experiment(
        "mice-queue-100M",
        "Transient queue at 100 Mbps (Figs 8, 9)",
        "001",
        "implemented",
        "mice_queue_100m",
    ),
    Experiment(
        "xcc-dumbbell-3",
        "XCP/RCP/MaxNet: single bottleneck, three flows",
        "002",
        "implemented",
        "xcc_dumbbell_3",
    ),
    Experiment(
        "xcc-rtt-fairness",
        "RTT unfairness, 30 ms vs 200 ms",
        "002",
        "implemented",
        "xcc_rtt_fairness",
    ),
    Experiment("xcp-maxmin-gap", "XCP is not max-min fair", "002", "implemented", "xcp_maxmin_gap"),
    Experiment(
        "xcc-mice", "Explicit protocols with mice traffic", "002", "implemented", "xcc_mice"
    ),
    Experiment("xcc-abrupt", "Abrupt change in demand", "002", "implemented", "xcc_abrupt"),
    Experiment(
        "xcc-multilink", "Two bottlenecks (parking lot)", "002", "implemented", "xcc_multilink"
    ),
    Experiment(
        "markmax-fluid",
        "MarkMax fluid model (Table I)",
        "003",
        "implemented",
        "markmax_fluid",
    ),
    Experiment(
        "markmax-s1-dt",
        "MarkMax Scenario 1, DropTail columns (Tables II, III)",
        "003",
        "implemented",
        "markmax_s1_dt",
    ),
    Experiment(
        "markmax-s1",
        "MarkMax Scenario 1, DT vs MM-B vs MM-T (Tables II, III)",
        "003",
        "implemented",
        "markmax_s1",
    ),
    Experiment(
        "markmax-s2",
        "MarkMax Scenario 2, reverse traffic (Table IV)",
        "003",
        "implemented",
        "markmax_s2",
    ),
    Experiment(
        "markmax-s3",
        "MarkMax Scenario 3, ten flows (Table V)",
        "003",
        "implemented",
        "markmax_s3",
    ),
    Experiment("slbn-1a", "SLBN Medium topology, churn", "004", "implemented", "slbn_1a"),
    Experiment("slbn-1b", "SLBN Medium topology, finite sessions", "004", "implemented", "slbn_1b"),
    Experiment("slbn-2a", "SLBN Large topology, mass arrival", "004", "implemented", "slbn_2a"),
    Experiment(
        "slbn-2b", "SLBN Large topology, churn after convergence", "004", "implemented", "slbn_2b"
    ),
)

REGISTRY: dict[str, Experiment] = {e.id: e for e in EXPERIMENTS}


def get(experiment_id: str) -> Experiment:
    """The experiment ``experiment_id``; ``KeyError`` with the known ids if there is none."""
    try:
        return REGISTRY[experiment_id]
    except KeyError:
        known = ", ".join(e.id for e in EXPERIMENTS if e.status == "implemented")
        raise KeyError(
            f"unknown experiment {experiment_id!r}; implemented: {known} "
            "(`xcc reproduce --list` shows all)"
        ) from None


def run(experiment_id: str, out_dir: str | Path, *, quick: bool = False) -> Path:
    """Run experiment ``experiment_id`` into ``out_dir``; return the report path."""
    return get(experiment_id).load().run(Path(out_dir), quick=quick)


#: Experiments that also run on real packets through the emu router, by stack (`xcc reproduce
#: ID --stack kernel|udp`): module under xcclab.reproduce with
#: ``run(out, quick, stack=..., experiment=ID)``.
STACK_MODULES: dict[str, str] = {
    "maxnet-cbr": "maxnet_cbr_stacks",
    "mice-http-50": "mice_stacks",
    "mice-http-200": "mice_stacks",
}


def stack_module(experiment_id: str) -> ModuleType:
    """The real-packet version of an experiment, or KeyError naming the ones that have one."""
    if experiment_id not in STACK_MODULES:
        have = ", ".join(sorted(STACK_MODULES))
        raise KeyError(f"experiment {experiment_id!r} has no --stack version (only: {have})")
    return importlib.import_module(f"{__name__}.{STACK_MODULES[experiment_id]}")
