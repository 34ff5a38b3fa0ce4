"""xcc-multilink: two bottlenecks (seed 002).

Parking lot with l1 = 970 Mbit/s and l2 = 800 Mbit/s (seed 002) and our layout: one flow over
both links, one over each link alone; RTT 50 ms for every flow (links 10 ms each), 30 s, rates
averaged over the last 10 s, bottleneck buffers 20 000 packets. Seed 002: all methods are stable
and max-min fair here, their dynamics following theory. Max-min (scaled by each protocol's target
utilisation): 400 Mbit/s for the two flows sharing l2 and 570 Mbit/s for the flow on l1 alone.
XCP is also compared with its own equilibrium (`xcclab.xcp_equilibrium`).
"""

from __future__ import annotations

from pathlib import Path

from ...claims import Claim, Qualitative, Reference
from ..common import explicit
from ..common.paper_claims import quote
from ..common.report import Comparison, atomic_dir, fmt, markdown_table, write_metrics
from ..experiment import Experiment
from . import chain

ID = "xcc-multilink"
TITLE = "Two bottlenecks, 970 and 800 Mbit/s (seed 002)"
CLAIM = "all protocols stable and max-min fair"
RATES = [970.0, 800.0]
FLOWS = [
    chain.ChainFlow("both", 0, 1),
    chain.ChainFlow("l1-only", 0, 0),
    chain.ChainFlow("l2-only", 1, 1),
]
T_END = 30.0


def run(out_dir, quick=False, *, log=None, progress=True):
    log = log or (lambda _m: None)
    scale = 0.2 if quick else 1.0
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        log(f"{ID}: {T_END * scale:g} s per protocol")
        results = explicit.run_all(
            lambda p: chain.chain(
                p, ID, RATES, FLOWS, rtt_s=0.05, link_delay_s=0.01, duration_s=T_END, scale=scale
            ),
            tmp,
            log,
            progress,
        )
        a, b = (T_END - 10) * scale, T_END * scale
        m = {}
        comparisons = []
        for p in explicit.PROTOCOLS:
            res = results[p.name]
            got = chain.measured_rates(res, FLOWS, a, b)
            ref = chain.references(p, RATES, FLOWS)
            m[p.name] = {
                "rates_bps": got,
                **ref,
                "drops": int(res.links["drops"].sum()),
                "peak_queue_packets": [
                    explicit.link_summary(res, p, name)["peak_queue_packets"]
                    for name in ("r0->r1", "r1->r2")
                ],
            }
            for f, g, w in zip(FLOWS, got, ref["maxmin"]):
                comparisons.append(
                    Comparison(
                        f"{p.label} rate vs max-min", w / 1e6, g / 1e6, "Mbit/s", {"flow": f.name}
                    )
                )
        figs = explicit.figure_rates(
            tmp, results, [f.name for f in FLOWS], "r0->r1", "Parking lot 970 / 800 Mbit/s"
        )
        # The max-min rates and XCP's equilibrium are references, not the paper's numbers:
        # they are claims of type "reference" (metrics.json "claims"), not comparisons.
        write_metrics(tmp, ID, quick=quick, measured=m, figures=figs)
        (tmp / "report.md").write_text(_report(m, figs, quick), encoding="utf-8")
    return out_dir / "report.md"


def _cell(got: float, want: float) -> str:
    return f"{fmt(got / 1e6, 1)} ({fmt(want / 1e6, 1)}; {fmt(100 * (got / want - 1), 1)} %)"


def _report(m: dict, figs: list[str], quick: bool) -> str:
    protos = explicit.PROTOCOLS
    rows = []
    for k, f in enumerate(FLOWS):
        rows.append(
            [f.name] + [_cell(m[p.name]["rates_bps"][k], m[p.name]["maxmin"][k]) for p in protos]
        )
    rows.append(["packets dropped", *[str(m[p.name]["drops"]) for p in protos]])
    rows.append(
        [
            "peak queue l1 / l2 (packets)",
            *[" / ".join(fmt(v, 0) for v in m[p.name]["peak_queue_packets"]) for p in protos],
        ]
    )
    x = m["xcp"]
    worst = {
        p.label: max(abs(g / w - 1) for g, w in zip(m[p.name]["rates_bps"], m[p.name]["maxmin"]))
        for p in protos
    }
    return explicit.report(
        ID,
        TITLE,
        quick,
        __doc__,
        [
            (
                "Results (payload Mbit/s, last 10 s; max-min and error in brackets)",
                [
                    markdown_table(["", *[p.label for p in protos]], rows),
                    "XCP's own equilibrium for this layout: "
                    + ", ".join(
                        f"{f.name} {fmt(v / 1e6, 1)}" for f, v in zip(FLOWS, x["xcp_equilibrium"])
                    )
                    + " Mbit/s; measured "
                    + ", ".join(f"{fmt(v / 1e6, 1)}" for v in x["rates_bps"])
                    + ".",
                    "Largest error against max-min: "
                    + ", ".join(f"{k} {fmt(100 * v, 1)} %" for k, v in worst.items())
                    + ". "
                    + explicit.loss_sentence(m)
                    + " XCP's equilibrium is not exactly max-min here either: l1 keeps giving "
                    "the flow bottlenecked at l2 its share of positive feedback, so the l1-only "
                    "flow settles where its negative feedback balances a share that does not "
                    "grow with l1's spare capacity (see xcp-maxmin-gap).",
                ],
            ),
        ],
        figs,
    )


_WHERE = "slide 'Multi-Link Topology' (C1 = 970, C2 = 800 Mb/s)"
_NAMES = {"xcp": "XCP", "rcp": "RCP", "maxnet": "MaxNet", "piqi-rcp": "PIQI-RCP",
          "jetmax": "JetMax"}  # fmt: skip
_FLOWS = ("both links", "l1 only", "l2 only")


def claims(metrics: dict) -> list[Claim]:
    m = metrics["measured"]
    q = quote("002", _WHERE, "All methods are stable and max-min fair in this case with their "
              "dynamics following the theoretical understanding")  # fmt: skip
    out: list[Claim] = [
        Qualitative(
            id="stable and max-min fair",
            quote=q,
            measure="rates against the max-min oracle (references below)",
            ours=None,
            observed="every protocol within 1 % of its max-min rates except XCP's l1-only flow, "
            "which sits at XCP's own equilibrium (also below)"
            if abs(m["xcp"]["rates_bps"][1] / m["xcp"]["maxmin"][1] - 1) > 0.01
            else "every protocol within 1 % of its max-min rates",
        )
    ]
    for key, label in _NAMES.items():
        r = m[key]
        for i, flow in enumerate(_FLOWS):
            out.append(
                Reference(
                    id=f"{label} {flow} vs max-min",
                    quote=q,
                    measure="mean rate over the last 10 s",
                    ours=r["rates_bps"][i] / 1e6,
                    unit="Mbit/s",
                    reconstruction={"piqi-rcp": "PIQI-RCP", "jetmax": "JetMax"}.get(key),
                    value=r["maxmin"][i] / 1e6,
                    source="max-min oracle, target-scaled",
                )
            )
        if "xcp_equilibrium" in r:
            for i, flow in enumerate(_FLOWS):
                out.append(
                    Reference(
                        id=f"{label} {flow} vs its equilibrium",
                        quote=q,
                        measure="mean rate over the last 10 s",
                        ours=r["rates_bps"][i] / 1e6,
                        unit="Mbit/s",
                        value=r["xcp_equilibrium"][i] / 1e6,
                        source="XCP's own equilibrium (Low, Andrew, Wydrowski)",
                    )
                )
    return out


EXPERIMENT = Experiment(id=ID, seed="002", title=TITLE, summary=CLAIM, run=run, claims=claims)
