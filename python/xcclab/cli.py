"""The ``xcc`` command line.

    xcc run SCENARIO --out DIR [--seed N] [--no-series] [--pcap a->b]
                                                          simulate, write a run directory
    xcc validate SCENARIO                                 check a scenario file
    xcc plot DIR [--smooth TIME]                          draw rates, cwnd, queues (PNG, SVG);
                                                          a [workload] run: FCT slowdown, queue CDF
    xcc list                                              algorithms and experiments
    xcc reproduce ID --out DIR [--quick] [--emu | --stack S] | --list   reproduce a paper experiment
    xcc reproduce ID --write-scenarios DIR                write its scenario files
    xcc reproduce --all [--out DIR] [--quick] [--jobs N]  all of them, with index.md/index.html
    xcc reproduce --index [--out DIR]                    index over the reports already in DIR
    xcc bench [--runs 5] [--scenario NAME] [--json]       simulator speed on standard scenarios
    xcc bench --emu [--rates 1000,2500] [--modes tcp,udp,xcc] [--runs N]
                                                          real-packet router speed and accuracy
    xcc sweep SPEC --out DIR [--jobs N] [--scheduler ADDRESS | --local-cluster]
                                                          run a parameter sweep (docs/sweeps.md)
    xcc query "SQL" [--root DIR] [--format table|csv|json] SQL over every run under DIR
    xcc plot-sweep DIR... --metric M --x PARAM [--y PARAM] [--reference M]
                                                          metric vs swept parameters, CI over seeds
    xcc emu SCENARIO --out DIR [--seed N] [--stack udp|kernel] | --cleanup
                                                          real packets: namespaces + TUN router
    xcc compare SCENARIO [--out DIR] [--stack udp|kernel] simulated vs emulated, differences
    xcc kernel load|unload|status|build [--cgroup NAME]   MaxNet TCP in the kernel (docs/kernel.md)
    xcc view PATH [--out FILE] [--no-open]               a run, compare, sweep or index as one
                                                          self-contained HTML page (docs/view.md)

Errors print ``xcc: error: <message>`` on stderr, never a traceback: exit status 2 for bad
input (scenario, arguments, paths), 1 when a run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .errors import NativeModuleMissing

if TYPE_CHECKING:
    from .isolated import Limits
    from .results import RunResult

EXIT_RUN_FAILED = 1
EXIT_BAD_INPUT = 2
#: A bug: a Rust panic (EX_SOFTWARE of sysexits.h).
EXIT_INTERNAL = 70
#: 128 + SIGPIPE, what a shell reports for a command a closed pipe stopped.
EXIT_BROKEN_PIPE = 141


class _Parser(argparse.ArgumentParser):
    """argparse with ``xcc: error:`` messages and exit status 2 (its default)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"xcc: error: {message}\n")


def _err(message: object) -> None:
    print(f"xcc: error: {message}", file=sys.stderr)


# -- subcommands -----------------------------------------------------------------------------
def cmd_run(args: argparse.Namespace) -> int:
    from ._progress import Stages
    from .results import run

    if args.threads is not None and args.threads < 1:
        _err(f"run: --threads {args.threads}: expected at least 1")
        return EXIT_BAD_INPUT
    threads = args.threads or os.cpu_count() or 1
    result = run(
        args.scenario,
        seed=args.seed,
        out=args.out,
        progress=not args.quiet,
        series=not args.no_series,
        pcap=args.pcap,
        stages=Stages(enabled=not args.quiet),
        threads=threads,
    )
    print(result.summary())
    domains = result.timing.get("domains", 1)
    if domains > 1:
        print(f"parallel engine: {domains} domains on {min(threads, domains)} threads")
    else:
        print("serial engine: the network is one domain (docs/architecture.md, parallel engine)")
    if args.pcap is not None:
        print(f"captured {len(result.pcap or [])} packets departing {args.pcap}")
    print(f"wrote {args.out}")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from .results import validate

    resolved = validate(args.scenario)
    parts = [
        f"{len(v)} {k}"
        for k, v in resolved.items()
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)
    ]
    name = resolved.get("name", "?")
    print(f"{args.scenario}: ok: scenario {name!r}" + (f" ({', '.join(parts)})" if parts else ""))
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from .plot import plot_run
    from .results import RunResult

    smooth = None
    if args.smooth is not None:
        from .errors import ScenarioError
        from .units import time_value

        smooth = time_value(args.smooth)
        if smooth is None or smooth <= 0:
            raise ScenarioError(f'--smooth: expected a time like "200ms", got {args.smooth!r}')
    from .plot_datacenter import has_datacenter_tables, plot_datacenter

    run = RunResult.load(Path(args.dir))
    paths = []
    datacenter = has_datacenter_tables(run)
    # A workload run draws its slowdown and queue figures; its time series only if it has any.
    if not datacenter or run.flow_series.height or run.link_series.height:
        paths += plot_run(run, args.out, formats=tuple(args.format), smooth=smooth)
    if datacenter:
        paths += plot_datacenter(run, args.out, formats=tuple(args.format))
    for path in paths:
        print(path)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from .algorithms import algorithms
    from .reproduce import experiments

    print("Algorithms")
    print(f"  {'name':<11} {'role':<10} {'status':<12} provenance")
    for a in algorithms():
        print(f"  {a.name:<11} {a.role:<10} {a.status:<12} {a.provenance}")
    print()
    _print_experiments(experiments())
    return 0


def _print_experiments(experiments: Sequence) -> None:
    print("Experiments (xcc reproduce ID)")
    print(f"  {'id':<20} {'seed':<5} {'also':<12} title")
    for e in experiments:
        also = ",".join(n for n, f in (("emu", e.emu), ("stack", e.stack)) if f) or "-"
        note = f" [{e.approximation}]" if e.approximation else ""
        print(f"  {e.id:<20} {e.seed:<5} {also:<12} {e.title}{note}")


def cmd_reproduce(args: argparse.Namespace) -> int:
    from . import reproduce

    if args.list:
        _print_experiments(reproduce.experiments())
        return 0
    if args.index:
        return _reproduce_index(args)
    if args.all:
        return _reproduce_all(args)
    if not args.id:
        _err("reproduce: give an experiment ID (or --all, or --list)")
        return EXIT_BAD_INPUT
    try:
        experiment = reproduce.get(args.id)
    except KeyError as exc:
        _err(exc.args[0])
        return EXIT_BAD_INPUT
    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    if args.write_scenarios:
        if experiment.scenarios is None:
            have = ", ".join(e.id for e in reproduce.experiments() if e.scenarios)
            _err(f"reproduce: {experiment.id} writes no scenario files (only: {have})")
            return EXIT_BAD_INPUT
        for path in experiment.scenarios(args.write_scenarios):
            print(path)
        return 0
    out = Path(args.out) if args.out else Path("results") / experiment.id
    if args.stack != "sim":
        if experiment.stack is None:
            have = ", ".join(e.id for e in reproduce.experiments() if e.stack)
            _err(f"experiment {experiment.id!r} has no --stack version (only: {have})")
            return EXIT_BAD_INPUT
        out = Path(args.out) if args.out else Path("results") / f"{experiment.id}-{args.stack}"
        report = experiment.stack(out, quick=args.quick, stack=args.stack, log=log)
        print(f"report: {report}")
        return 0
    if args.emu:
        if experiment.emu is None:
            _err(f"reproduce: {experiment.id} has no real-packet version (--emu)")
            return EXIT_BAD_INPUT
        from ._interrupt import run_interruptible

        report = run_interruptible(experiment.emu, out, quick=args.quick, log=log)
        print(f"report: {report}")
        return 0
    report = reproduce.run(experiment.id, out, quick=args.quick, log=log)
    print(f"report: {report}")
    return 0


def _reproduce_index(args: argparse.Namespace) -> int:
    from .reproduce.index import index_existing

    if args.id or args.all:
        _err("reproduce: --index rebuilds the index of existing reports; give no ID and no --all")
        return EXIT_BAD_INPUT
    out = Path(args.out) if args.out else Path("results") / "reproduction"
    try:
        done = index_existing(out, log=lambda m: print(m, file=sys.stderr))
    except FileNotFoundError as exc:
        _err(f"reproduce: {exc}")
        return EXIT_BAD_INPUT
    print(f"index: {done.index_md} and {done.index_html}")
    return 0


def _reproduce_all(args: argparse.Namespace) -> int:
    from .reproduce.index import reproduce_all

    if args.id:
        _err("reproduce: give an experiment ID or --all, not both")
        return EXIT_BAD_INPUT
    out = Path(args.out) if args.out else Path("results") / "reproduction"
    done = reproduce_all(
        out,
        quick=args.quick,
        jobs=args.jobs,
        scheduler=args.scheduler,
        local_cluster=args.local_cluster,
        log=lambda m: print(m, file=sys.stderr),
    )
    for row in done.failed:
        _err(f"reproduce: {row.experiment.id} failed: {row.error}")
    print(f"index: {done.index_md} and {done.index_html}")
    return EXIT_RUN_FAILED if done.failed else 0


def cmd_bench(args: argparse.Namespace) -> int:
    if args.emu:
        return _bench_emu(args)
    from .bench import bench_main

    return bench_main(args)


def _bench_emu(args: argparse.Namespace) -> int:
    from . import bench_emu, emu

    if args.runs < 1 or args.seconds <= 0:
        _err("bench: --runs must be at least 1 and --seconds positive")
        return EXIT_BAD_INPUT
    try:
        rates = [int(r) for r in args.rates.split(",")]
        if any(r <= 0 for r in rates):
            raise ValueError
    except ValueError:
        _err(f"bench: --rates {args.rates!r}: expected positive Mbit/s, comma-separated (100,500)")
        return EXIT_BAD_INPUT
    modes = tuple(m for m in args.modes.split(",") if m)
    if not modes or any(m not in bench_emu.MODES for m in modes):
        _err(f"bench: --modes {args.modes!r}: expected tcp, udp and/or xcc, comma-separated")
        return EXIT_BAD_INPUT
    reason = emu.check()
    if reason is not None:
        _err(f"bench --emu: {reason}")
        return EXIT_RUN_FAILED
    try:
        runs = bench_emu.measure(rates, args.seconds, args.runs, modes)
    except RuntimeError as exc:
        _err(f"bench --emu: {exc}")
        return EXIT_RUN_FAILED
    medians = bench_emu.summarise(runs)
    if args.json:
        print(json.dumps({"runs": runs, "medians": medians}, indent=2))
    else:
        print(bench_emu.format_table(runs, medians))
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep_runner import sweep

    result = sweep(
        args.spec,
        args.out,
        jobs=args.jobs,
        scheduler=args.scheduler,
        local_cluster=args.local_cluster,
        progress=True,
        limits=_limits(args),
    )
    print(result.summary())
    print(f"wrote {args.out}/manifest.json")
    return EXIT_RUN_FAILED if result.failed else 0


def _limits(args: argparse.Namespace) -> Limits | None:
    """The per-point limits of ``--time-limit`` and ``--memory-limit`` (None if neither)."""
    from .errors import ScenarioError
    from .isolated import Limits
    from .units import quantity_value, time_value

    seconds = memory = None
    if args.time_limit is not None:
        seconds = time_value(args.time_limit)
        if seconds is None or seconds <= 0:
            raise ScenarioError(
                f'--time-limit: expected a time like "600s", got {args.time_limit!r}'
            )
    if args.memory_limit is not None:
        memory = quantity_value(args.memory_limit)
        if memory is None or memory <= 0 or not args.memory_limit.rstrip().endswith("B"):
            raise ScenarioError(
                f'--memory-limit: expected a size like "4GB" or "4GiB", got {args.memory_limit!r}'
            )
        memory = int(memory)
    if seconds is None and memory is None:
        return None
    return Limits(seconds=seconds, memory_bytes=memory)


def cmd_query(args: argparse.Namespace) -> int:
    import duckdb
    import polars as pl

    from .results_catalog import catalog

    with catalog(args.root) as cat:
        try:
            frame = cat.sql(args.sql)
        except duckdb.Error as exc:
            _err(f"query: {exc}")
            return EXIT_BAD_INPUT
    if args.format == "csv":
        sys.stdout.write(frame.write_csv())
    elif args.format == "json":
        print(json.dumps(frame.to_dicts(), indent=2, default=str))
    else:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=60, tbl_width_chars=200):
            print(frame)
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    from .price_encoding import format_encoding, price_encoding

    if args.what == "price-encoding":
        enc = price_encoding(args.x_max, args.x_min, args.t, args.epsilon)
        print(format_encoding(enc))
    else:
        from .maxnet_stability import design, format_design, plot_design, slope_range

        d = design(args.tau_bar, args.alpha * args.t, args.eta)
        print(format_design(d))
        slopes = slope_range(d, args.alpha)
        print(
            f"alpha = {args.alpha}: "
            + (
                f"stable; lines through -1/alpha above S and T have slopes in "
                f"[{slopes[0]:.4f}, {slopes[1]:.4f}]"
                if args.alpha < d.alpha_max and slopes
                else "NOT provably stable"
            )
        )
        if args.plot:
            for path in plot_design(d, Path(args.plot) / "spiral-tail-line"):
                print(path)
    return 0


def cmd_plot_sweep(args: argparse.Namespace) -> int:
    from .plot_sweep import plot_sweep

    for path in plot_sweep(
        args.dir,
        args.metric,
        args.x,
        y=args.y,
        hue=args.hue,
        agg=args.agg,
        where=args.where,
        reference=args.reference,
        out=args.out,
        formats=tuple(args.format or ["png", "svg"]),
    ):
        print(path)
    return 0


def cmd_kernel(args: argparse.Namespace) -> int:
    from .kernel import loader
    from .kernel.build import KernelUnavailable

    try:
        if args.action == "load":
            params = loader.MaxNetParams(
                t_s=args.t,
                alpha=args.alpha,
                eta=args.eta,
                x_max_bps=args.x_max,
                maxstart=not args.no_maxstart,
                set_cc=args.set_cc,
                fixed_price_s=args.fixed_price,
            )
            state = loader.load(params, cgroup=args.cgroup)
        elif args.action == "unload":
            state = loader.unload()
        elif args.action == "build":
            built = loader.build()
            state = {k: str(v) for k, v in vars(built).items()}
        else:
            state = loader.status()
    except KernelUnavailable as exc:
        _err(f"kernel MaxNet unavailable here: {exc}")
        return EXIT_RUN_FAILED
    print(json.dumps(state, indent=2))
    if args.action == "unload" and "maxnet" in state["struct_ops"]:
        _err("maxnet is still registered (bpftool struct_ops list)")
        return EXIT_RUN_FAILED
    return 0


def cmd_emu(args: argparse.Namespace) -> int:
    from .emu import cleanup, emulate

    if args.cleanup:
        names = cleanup()
        for n in names:
            print(f"deleted namespace {n}")
        print(f"{len(names)} leftover namespace(s) removed")
        return 0
    if args.scenario is None or args.out is None:
        _err("xcc emu needs SCENARIO and --out DIR (or --cleanup)")
        return EXIT_BAD_INPUT
    from ._interrupt import run_interruptible

    result = run_interruptible(
        emulate, args.scenario, seed=args.seed, out=args.out, stack=args.stack
    )
    # events = packets the router read, packet-hops = link crossings (docs/emu.md).
    print(result.summary().replace(" s simulated, ", " s emulated, ", 1))
    _warn_fidelity(result)
    return 0


def _warn_fidelity(result: RunResult) -> None:
    from .emu import fidelity_warnings

    for w in fidelity_warnings(result.run_info.get("emu", {})):
        print(f"xcc: warning: {w}", file=sys.stderr)


def cmd_compare(args: argparse.Namespace) -> int:
    from ._interrupt import run_interruptible

    out = Path(args.out) if args.out else None
    text = run_interruptible(_compare, args.scenario, out, args.stack)
    print(text)
    return 0


def _compare(scenario: str, out: Path | None, stack: str = "udp") -> str:
    """Every precondition of the real half first, then both halves in memory, then the whole
    output directory at once (nothing is written when either half fails)."""
    from ._fsutil import atomic_dir
    from .compare import differences, overlay_figure, render
    from .emu import emulate, preflight
    from .results import run

    preflight(scenario, stack=stack)
    sim = run(scenario)
    emu = emulate(scenario, stack=stack)
    _warn_fidelity(emu)
    d = differences(sim, emu)
    text = render(d)
    if out is not None:
        with atomic_dir(out) as tmp:
            for name, result in (("sim", sim), ("emu", emu)):
                (tmp / name).mkdir()
                result.write_into(tmp / name)
            figure = overlay_figure(sim, emu, tmp)
            text = render(d, figure.name if figure else None)
            (tmp / "compare.md").write_text(text, encoding="utf-8")
            (tmp / "compare.json").write_text(json.dumps(d, indent=2), encoding="utf-8")
    return text


def cmd_view(args: argparse.Namespace) -> int:
    from .view import write_view
    from .view.browser import open_page

    kind, page = write_view(Path(args.path), args.out)
    size = page.stat().st_size / 1e6
    print(f"{page} ({kind}, {size:.1f} MB)")
    if not args.no_open and not open_page(page):
        print("xcc view: no browser to open here; open the file above in one", file=sys.stderr)
    return 0


# -- parser ----------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="xcc",
        description="xcclab: simulate and reproduce explicit congestion control experiments.",
    )
    parser.add_argument("--version", action="version", version=f"xcclab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("run", help="simulate a scenario and write a run directory")
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml or .json)")
    p.add_argument("--out", required=True, metavar="DIR", help="run directory to write")
    p.add_argument("--seed", type=int, help="override the scenario's seed")
    p.add_argument(
        "--no-series",
        dest="no_series",
        action="store_true",
        help='skip the time-series tables (as [metrics] interval = "0s")',
    )
    p.add_argument(
        "--pcap",
        metavar="LINK",
        help='capture the packets departing link direction LINK ("a->b") to DIR/capture.pcap',
    )
    p.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no progress: neither the simulation's bar nor the stage lines on stderr",
    )
    p.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help="threads of the parallel engine (default: the cores there are); the results are "
        "the same bytes for every N",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("emu", help="run a scenario on real packets (root; docs/emu.md)")
    p.add_argument("scenario", metavar="SCENARIO", nargs="?", help="scenario file (.toml or .json)")
    p.add_argument("--out", metavar="DIR", help="run directory to write")
    p.add_argument(
        "--stack",
        choices=("udp", "kernel"),
        default="udp",
        help="MaxNet flows on xcclab's UDP transport (default) or on Linux TCP with the BPF "
        "maxnet congestion control, loaded for the run (docs/kernel.md)",
    )
    p.add_argument("--seed", type=int, help="override the scenario's seed")
    p.add_argument("--cleanup", action="store_true", help="delete namespaces left by a crashed run")
    p.set_defaults(func=cmd_emu)

    p = sub.add_parser("compare", help="simulate and emulate a scenario, report the differences")
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml or .json)")
    p.add_argument(
        "--stack",
        choices=("udp", "kernel"),
        default="udp",
        help="emulate MaxNet and DCTCP flows on xcclab's UDP transport (default) or on Linux TCP "
        "with the BPF maxnet / xcc_dctcp congestion controls (docs/kernel.md)",
    )
    p.add_argument(
        "--out", metavar="DIR", help="write sim/, emu/, compare.md and compare.json here"
    )
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("validate", help="check a scenario file")
    p.add_argument("scenario", metavar="SCENARIO")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("plot", help="plot rates, cwnd and queues of a run directory")
    p.add_argument("dir", metavar="DIR", help="run directory written by `xcc run`")
    p.add_argument("--out", metavar="DIR", help="where to write (default DIR/plots)")
    p.add_argument(
        "--format", action="append", choices=["png", "svg", "pdf"], help="repeatable; png+svg"
    )
    p.add_argument(
        "--smooth",
        metavar="TIME",
        help="rate window, e.g. 200ms (default: one interval); window-based flows get at "
        "least 4 RTTs, so their once-per-RTT bursts do not alias into a ripple",
    )
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("list", help="algorithms and experiments with their status")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("reproduce", help="reproduce a paper experiment and write a report")
    p.add_argument("id", nargs="?", metavar="ID", help="experiment id (see --list)")
    p.add_argument("--out", metavar="DIR", help="output directory (default results/ID)")
    p.add_argument("--quick", action="store_true", help="short runs (for tests)")
    p.add_argument("--list", action="store_true", help="list the experiments")
    p.add_argument(
        "--stack",
        choices=["sim", "udp", "kernel"],
        default="sim",
        help="real packets through the emu router: MaxNet on the UDP transport or kernel TCP"
        " (root; docs/kernel.md); the report overlays both and the simulator",
    )
    p.add_argument(
        "--emu",
        action="store_true",
        help="also on real packets (root; namespaces + TUN router): report in OUT/emu/",
    )
    p.add_argument(
        "--write-scenarios",
        metavar="DIR",
        help="instead of running: write the experiment's scenario files into DIR",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="every implemented experiment in parallel, plus OUT/index.{md,html}"
        " (default OUT: results/reproduction)",
    )
    p.add_argument(
        "--index",
        action="store_true",
        help="rebuild OUT/index.{md,html} from the reports already in OUT/<id>/, running nothing",
    )
    p.add_argument("--jobs", type=int, metavar="N", help="with --all: worker processes")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="with --all: a Dask scheduler")
    where.add_argument(
        "--local-cluster", dest="local_cluster", action="store_true", help="with --all: Dask"
    )
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("bench", help="measure simulator speed on benchmarks/*.toml")
    p.add_argument("--runs", type=int, default=5, help="measured runs per scenario (default 5)")
    p.add_argument("--scenario", action="append", metavar="NAME", help="only this one")
    p.add_argument("--dir", metavar="DIR", help="benchmark directory (default benchmarks/)")
    p.add_argument("--warmup", type=int, default=1, help="unmeasured runs first (default 1)")
    p.add_argument(
        "--threads", type=int, default=1, metavar="N", help="parallel engine threads (default 1)"
    )
    p.add_argument("--json", action="store_true", help="print machine-readable results")
    p.add_argument(
        "--emu",
        action="store_true",
        help="instead: the real-packet router's capacity and accuracy (root; docs/emu.md)",
    )
    p.add_argument(
        "--rates", default="1000,2500", metavar="MBPS", help="with --emu: link rates (1000,2500)"
    )
    p.add_argument(
        "--modes",
        default="tcp,udp,xcc",
        metavar="LOADS",
        help="with --emu: loads, Linux TCP, paced UDP and/or xcclab's transport (tcp,udp,xcc)",
    )
    p.add_argument(
        "--seconds", type=float, default=3.0, help="with --emu: seconds per run (default 3)"
    )
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("sweep", help="run a scenario over a grid of parameters and seeds")
    p.add_argument("spec", metavar="SPEC", help="sweep spec (.toml, see docs/sweeps.md)")
    p.add_argument("--out", required=True, metavar="DIR", help="sweep directory (resumable)")
    p.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: all cores)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler, tcp://host:8786")
    where.add_argument(
        "--local-cluster",
        dest="local_cluster",
        action="store_true",
        help="run on a dask.distributed LocalCluster (--jobs workers)",
    )
    p.add_argument(
        "--time-limit",
        metavar="TIME",
        help='per point: kill a point that runs longer, e.g. "600s" (local pool only)',
    )
    p.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help='per point: kill a point whose resident memory passes this, e.g. "4GiB"',
    )
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("query", help="SQL over all runs under a directory (DuckDB views)")
    p.add_argument("sql", metavar="SQL", help="a query over runs, flows, links, *_series, ...")
    p.add_argument("--root", default=".", metavar="DIR", help="where to look for runs (.)")
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.set_defaults(func=cmd_query)

    p = sub.add_parser("analyze", help="analysis tools: MaxNet's price encoding and stability")
    p.add_argument("what", choices=["price-encoding", "maxnet-stability"], help="which analysis")
    p.add_argument("--x-max", type=float, default=1e15, help="largest rate, bit/s (1e15)")
    p.add_argument("--x-min", type=float, default=32.0, help="smallest rate, bit/s (32)")
    p.add_argument("--t", type=float, default=0.4, help="demand scale T, seconds (0.4)")
    p.add_argument("--epsilon", type=float, default=1e-5, help="relative rate precision (1e-5)")
    p.add_argument("--tau-bar", type=float, default=1000.0, help="largest RTT, seconds (1000)")
    p.add_argument("--alpha", type=float, default=0.66, help="loop gain alpha (0.66)")
    p.add_argument("--eta", type=float, default=0.06, help="lead-lag zero eta (0.06)")
    p.add_argument("--plot", metavar="DIR", help="maxnet-stability: draw S, T and L into DIR")
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("plot-sweep", help="plot a metric against swept parameters (CI over seeds)")
    p.add_argument("dir", nargs="+", metavar="DIR", help="sweep directories written by `xcc sweep`")
    p.add_argument(
        "--metric",
        required=True,
        help="jain, jain_maxmin, max_abs_maxmin_error, max_convergence_s, converged_flows or "
        "TABLE.COLUMN, e.g. links.drops",
    )
    p.add_argument(
        "--x",
        required=True,
        metavar="PARAM",
        help="swept parameter on the x axis, or a per-flow quantity: flow, flows.COLUMN "
        "(e.g. flows.min_rtt_s; with a flows.COLUMN metric)",
    )
    p.add_argument("--y", metavar="PARAM", help="second parameter: draw a heatmap")
    p.add_argument(
        "--hue", metavar="PARAM", help="one line per value (default: every other; 'sweep')"
    )
    p.add_argument("--reference", metavar="METRIC", help="dashed reference, e.g. flows.maxmin_bps")
    p.add_argument("--agg", default="mean", choices=["mean", "sum", "min", "max"])
    p.add_argument(
        "--where", metavar="SQL", help="filter the metric's rows, e.g. \"name = 'a->b'\""
    )
    p.add_argument("--out", metavar="DIR", help="where to write (default DIR/plots)")
    p.add_argument("--format", action="append", choices=["png", "svg", "pdf"])
    p.set_defaults(func=cmd_plot_sweep)

    p = sub.add_parser(
        "view", help="one self-contained HTML page of a run, compare, sweep or reproduction index"
    )
    p.add_argument("path", metavar="PATH", help="a run, compare or sweep directory, or an index")
    p.add_argument("--out", metavar="FILE", help="where to write the page (PATH/view.html)")
    p.add_argument("--no-open", action="store_true", help="write the page, do not open it")
    p.set_defaults(func=cmd_view)

    p = sub.add_parser("kernel", help="MaxNet TCP in the Linux kernel via BPF (root)")
    p.add_argument("action", choices=["load", "unload", "status", "build"])
    p.add_argument("--cgroup", default="xcc-maxnet", help="child cgroup for sock_ops (xcc-maxnet)")
    p.add_argument("--t", type=float, default=0.4, help="demand scale T, seconds (0.4)")
    p.add_argument("--alpha", type=float, default=0.66, help="loop gain alpha (0.66)")
    p.add_argument("--eta", type=float, default=0.06, help="lead-lag zero eta (0.06)")
    p.add_argument("--x-max", type=float, default=1e15, help="largest rate, bit/s (1e15)")
    p.add_argument("--no-maxstart", action="store_true", help="start from the price law")
    p.add_argument(
        "--set-cc", action="store_true", help="make every TCP socket in the cgroup use maxnet"
    )
    p.add_argument(
        "--fixed-price", type=float, metavar="SECONDS", help="test mode: receivers stamp this"
    )
    p.set_defaults(func=cmd_kernel)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "plot" and args.format is None:
        args.format = ["png", "svg"]
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return status
    except BrokenPipeError:
        # The reader went away (`xcc list | head`): stop quietly, as a SIGPIPE would, and keep
        # the interpreter's own flush at exit from failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except NativeModuleMissing as exc:
        _err(exc)
        return EXIT_RUN_FAILED
    except ValueError as exc:  # bad scenario / input (native ValueError, ScenarioError)
        _err(exc)
        return EXIT_BAD_INPUT
    except RuntimeError as exc:  # a run broke an invariant, or another run failure
        _err(exc)
        return EXIT_RUN_FAILED
    except OSError as exc:  # cannot write the output, etc.
        _err(exc)
        return EXIT_RUN_FAILED
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except BaseException as exc:  # PyO3's PanicException derives from BaseException
        if not is_rust_panic(exc):
            raise
        _err(internal_error_message(exc))
        return EXIT_INTERNAL


def is_rust_panic(exc: BaseException) -> bool:
    """A Rust panic in the native module, as PyO3 raises it (``pyo3_runtime.PanicException``)."""
    return type(exc).__name__ == "PanicException"


def internal_error_message(exc: BaseException) -> str:
    """One line for a Rust panic: what it said and where its backtrace was logged."""
    from .errors import load_native

    try:
        log = load_native().panic_log_path()
    except Exception:  # an older native module: no log to point at
        log = None
    where = f"; the backtrace is in {log}" if log else ""
    return f"internal error (a bug in xcclab, please report it): {exc}{where}"


if __name__ == "__main__":
    raise SystemExit(main())
