"""``amws-conformance``: the project's commands beside pytest.

- ``selfcheck``: proof that every fault of the reference server's catalogue is caught;
- ``costs``: measure the cost table the run plans are chosen by;
- ``plan NAME``: print a plan's tests, its units per bucket and what it leaves uncovered.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from harness._plan import PLANS, CostTable, build, units_of


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
        from harness.selfcheck import main as selfcheck

        return selfcheck(argv)
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
    args = parser.parse_args(argv)
    if args.command == "costs":
        from harness._costs import main as costs_main

        return costs_main(args.output, args.from_report, args.kill_matrix)
    return _plan(args.name, args.tests)


if __name__ == "__main__":
    raise SystemExit(main())
