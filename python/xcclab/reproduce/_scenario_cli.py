"""The command line every packet reproduction module offers (``python -m xcclab.reproduce.X``):
``--write-scenarios DIR`` writes its scenario files, ``--out DIR [--quick]`` runs it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def scenario_cli(
    module: str,
    write_scenarios: Callable[[str], list[Path]],
    run: Callable[..., Path],
    argv: list[str] | None = None,
) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {module}")
    parser.add_argument("--write-scenarios", metavar="DIR", help="write the scenario TOML files")
    parser.add_argument("--out", metavar="DIR", help="run the experiment into DIR")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.write_scenarios:
        for path in write_scenarios(args.write_scenarios):
            print(path)
    if args.out:
        print(run(args.out, quick=args.quick, log=lambda m: print(m, file=sys.stderr)))
    if not (args.write_scenarios or args.out):
        parser.print_help()
    return 0
