"""``amws-conformance``: the project's commands beside pytest.

- ``selfcheck``: proof that every fault of the reference server's catalogue is caught (the
  self-check is a package of its own, ``selfcheck``, also run as ``amws-selfcheck``: it imports
  the reference server, which nothing here does, so this command only starts it);
- ``costs``: measure the cost table the run plans are chosen by;
- ``plan NAME``: print a plan's tests, its units per bucket and what it leaves uncovered;
- ``sweep``: remove what an interrupted or killed run left on its target.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import httpx

from harness._costs import main as costs_main
from harness._journal import default_state_dir
from harness._plan import PLANS, CostTable, build, units_of
from harness._profile import ProfileError
from harness._sweep import main as sweep_main


def _plan(name: str, tests: bool) -> int:
    table = CostTable.load()
    plan = build(name, table)
    chosen = sorted(plan.keeps)
    units = units_of(chosen, table)
    print(f"plan {name}: {len(chosen)} of {len(table.tests)} tests")
    for bucket, spent in sorted(units.items(), key=lambda i: -i[1]):
        print(f"  {bucket:14} {spent:>8,} units")
    if plan.uncovered:
        print("uncovered: " + ", ".join(plan.uncovered))
    if tests:
        print("\n".join(chosen))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["selfcheck"]:
        # A process of its own: the harness never imports the self-check or the server.
        return subprocess.call([sys.executable, "-m", "selfcheck", *argv[1:]])
    parser = argparse.ArgumentParser(prog="amws-conformance", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("selfcheck", help="run the self-check (see --help of it)")
    costs = commands.add_parser("costs", help="measure the cost table (runs the suites, deep)")
    costs.add_argument("--output", help="where to write it (default: harness/costs.json)")
    costs.add_argument("--from-report", help="build it from a deep run's report.json instead")
    costs.add_argument(
        "--kill-matrix",
        nargs="+",
        default=[],
        metavar="FILE",
        help="self-check outputs (--output) saying which tests kill which fault; several "
        "(a deep one, a --plan certify one) add up, as each stops at a fault's first kill",
    )
    plan = commands.add_parser("plan", help="show what a plan runs and spends")
    plan.add_argument("name", choices=PLANS)
    plan.add_argument("--tests", action="store_true", help="list the tests too")
    sweep = commands.add_parser(
        "sweep",
        help="remove what a run left on its target: from its ledger file, else by its name tag",
    )
    sweep.add_argument("--target", required=True, metavar="PROFILE", help="the target profile")
    which = sweep.add_mutually_exclusive_group()
    which.add_argument(
        "--run-id",
        help="the run to sweep: its ledger files (xdist workers' too), else its name tag "
        "(default: every ledger file left for this target)",
    )
    which.add_argument("--ledger", metavar="FILE", help="one ledger file to sweep")
    sweep.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="where runs wrote their ledger files (default: $AMWS_STATE_DIR, else "
        "~/.local/state/amws-conformance)",
    )
    sweep.add_argument(
        "--dry-run", action="store_true", help="print what would be deleted, delete nothing"
    )
    args = parser.parse_args(argv)
    if args.command == "sweep":
        try:
            return sweep_main(
                args.target,
                args.run_id,
                args.ledger,
                args.state_dir or default_state_dir(),
                args.dry_run,
            )
        except ProfileError as error:
            print(f"amws-conformance sweep: {error}", file=sys.stderr)
            return 2
        except httpx.HTTPError as error:
            # What is left stays in the ledger files: the same command retries it.
            print(f"amws-conformance sweep: the target failed: {error}", file=sys.stderr)
            return 1
    if args.command == "costs":
        return costs_main(args.output, args.from_report, args.kill_matrix)
    return _plan(args.name, args.tests)


if __name__ == "__main__":
    raise SystemExit(main())
