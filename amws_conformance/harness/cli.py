"""``amws-conformance``: the project's commands beside pytest.

- ``run``: run the installed suites against a target (pytest on the ``suites`` package with the
  harness plugin, from any working directory; arguments after ``--`` go to pytest);
- ``init [PATH]``: write a commented target profile to fill in (made from the profile schema);
- ``selfcheck``: proof that every fault of the reference server's catalogue is caught (the
  self-check is a package of its own, ``selfcheck``, also run as ``amws-selfcheck``: it imports
  the reference server, which nothing here does, so this command only starts it);
- ``costs``: measure the cost table the run plans are chosen by;
- ``plan NAME``: print a plan's tests, its units per bucket and what it leaves uncovered;
- ``expectations --from REPORT``: an expectations file listing what failed in a run's report;
- ``sweep``: remove what an interrupted or killed run left on its target;
- ``replay REPORT --target P``: run again only the tests behind a report's failed, blocked and
  flaky rules, with its seed; print each rule FIXED / STILL FAILING / NOW BLOCKED;
- ``diff OLD NEW``: the rules two runs' reports judge differently (regressed, fixed, ...);
- ``bundle REPORT_DIR -o ZIP``: a run's evidence in one zip, with the sha256 of every file;
- ``verify ZIP``: check a bundle's hashes and spec, and recompute its verdicts.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from amws_conformance.harness import _launch, plugin
from amws_conformance.harness._run import DEFAULT_LATENCY
from amws_conformance.harness.evidence import bundle as _bundle
from amws_conformance.harness.evidence import diff as _diff
from amws_conformance.harness.evidence import replay as _replay
from amws_conformance.harness.evidence import verify as _verify
from amws_conformance.harness.evidence.expectations import main_from as expectations_from
from amws_conformance.harness.lifecycle.journal import default_state_dir
from amws_conformance.harness.lifecycle.sweep import main as sweep_main
from amws_conformance.harness.plan.costs import main as costs_main
from amws_conformance.harness.plan.plan import PLANS, CostTable, units_of
from amws_conformance.harness.plan.schedule import Schedule
from amws_conformance.harness.target.profile import ProfileError
from amws_conformance.harness.target.profile import load as load_profile
from amws_conformance.harness.target.template import write as write_template

_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr):`~?([^`]+)`")


def plain(text: str | None) -> str:
    """A docstring as a terminal shows it: without reStructuredText's markup (``x``, a
    :func:`role`), which help texts would otherwise print as it stands."""
    return _ROLE.sub(r"\1", (text or "").replace("``", ""))


class _OptionList:
    """Stands in for pytest's option parser to list the harness plugin's options."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def getgroup(self, name: str, description: str = "") -> _OptionList:
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        takes = attrs.get("metavar") or (
            "" if attrs.get("action") else names[-1].lstrip("-").upper()
        )
        choices = attrs.get("choices")
        shown = "{" + ",".join(choices) + "}" if choices else takes
        self.lines.append(f"  {', '.join(names)}{' ' + shown if shown else ''}")
        self.lines.append(
            textwrap.fill(
                plain(attrs.get("help", "")),
                width=88,
                initial_indent=" " * 8,
                subsequent_indent=" " * 8,
            )
        )


def _plugin_options() -> str:
    """The harness plugin's own options (pytest --help, group AMWS conformance), as run's
    help lists them: they go after --."""
    listing = _OptionList()
    plugin.pytest_addoption(listing)  # type: ignore[arg-type]
    return "options of the harness plugin, given after --:\n" + "\n".join(listing.lines)


def _plan(name: str, tests: bool, target: str | None = None, minutes: float | None = None) -> int:
    table = CostTable.load()
    profile = None
    if target is not None:
        try:
            profile = load_profile(target)
        except ProfileError as error:
            print(f"amws-conformance plan: {error}", file=sys.stderr)
            return 4
    # On the target's declared buckets (its plan's budget buys what they pay for); without
    # one, on documented buckets, as a staging system enforces them.
    schedule = Schedule.for_run(name, table, profile)
    plan = schedule.plan
    chosen = sorted(plan.keeps)
    units = units_of(chosen, table)
    where = "" if profile is not None else " (on documented buckets; --target P: on P's)"
    print(f"plan {name}: {len(chosen)} of {len(table.tests)} tests{where}")
    for bucket, spent in sorted(units.items(), key=lambda i: -i[1]):
        print(f"  {bucket:14} {spent:>8,} units")
    if plan.uncovered:
        print("uncovered: " + ", ".join(plan.uncovered))
    if profile is not None:
        # The line a run on that target prints before its first test: the forecast in
        # minutes on the buckets its profile declares (the documented ones by default).
        nodeids = list(table.tests)
        schedule.keep(nodeids)
        schedule.order = [schedule.order[i] for i in schedule.interleave(schedule.order, profile)]
        print(schedule.line(profile, DEFAULT_LATENCY, minutes))
    if tests:
        print("\n".join(chosen))
    return 0


def _run(target: str | None, plan: str | None, report: str | None, passed: list[str]) -> int:
    try:
        arguments = _launch.pytest_arguments(target, plan, report, passed)
    except (_launch.SuitesMissing, _launch.UnknownTest) as error:
        print(f"amws-conformance run: {error}", file=sys.stderr)
        return 4
    return _launch.run(arguments)


def _init(path: Path) -> int:
    try:
        write_template(path)
    except FileExistsError:
        print(f"amws-conformance init: {path} exists; it is left as it is", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"amws-conformance init: cannot write {path} ({error.strerror})", file=sys.stderr)
        return 1
    print(
        f"wrote {path}: fill in base_url and the keys (a value written ${{NAME}} is read from "
        f"the environment), then run\n"
        f"  amws-conformance run --target {path} --conformance-report report/"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["selfcheck"]:
        # A process of its own: the harness never imports the self-check or the server.
        return subprocess.call([sys.executable, "-m", "amws_conformance.selfcheck", *argv[1:]])
    parser = argparse.ArgumentParser(
        prog="amws-conformance",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,  # the docstring's list, as written
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {_bundle.suite_version()}"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run",
        help="run the installed suites against a target; arguments after -- go to pytest",
        description="Runs the suites shipped in this package with pytest and the harness "
        "plugin. Any other option of the plugin (pytest --help, group AMWS conformance: "
        "--max-minutes, --rules, --seed ...) and any pytest option goes after --, e.g. "
        "amws-conformance run --target p.yaml -- --max-minutes 30 -x; a test id after -- "
        "runs that test alone. Exit status, from the certifying verdict: 0 every certifying "
        "rule in the run's scope passed (failures of assumed rules are listed, not counted, "
        "unless --strict-informative), 1 one failed, 6 incomplete (a rule in scope left "
        "undecided), 2 interrupted, 4 the profile is unusable.",
        epilog=_plugin_options(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "--target",
        metavar="PROFILE",
        help="the target profile (amws-conformance init writes one to fill in); without it "
        "the embedded reference server is started",
    )
    run.add_argument(
        "--plan",
        choices=PLANS,
        help="gate, certify or deep (default: the profile's plan, else certify, or deep where "
        "the profile raises the full key's and the failed-authentication buckets)",
    )
    run.add_argument(
        "--conformance-report", metavar="DIR", help="write report.json and report.html to DIR"
    )
    replay = commands.add_parser(
        "replay",
        help="run again the tests behind a report's failed, blocked and flaky rules; "
        "arguments after -- go to pytest",
        description=plain(_replay.__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("report", type=Path, metavar="REPORT_DIR_OR_JSON")
    replay.add_argument(
        "--target", metavar="PROFILE", help="the target profile (default: the embedded server)"
    )
    replay.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="DIR",
        help="where the new report goes (default: the report's folder name + -replay)",
    )
    init = commands.add_parser("init", help="write a commented target profile to fill in")
    init.add_argument(
        "path",
        nargs="?",
        default="profile.yaml",
        type=Path,
        help="where to write it (default: profile.yaml); an existing file is left alone",
    )
    commands.add_parser("selfcheck", help="run the self-check (see --help of it)")
    diff = commands.add_parser(
        "diff",
        help="the rules two runs judge differently; exit status 1 when one regressed",
        description=plain(_diff.__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    diff.add_argument("old", type=Path, metavar="OLD/report.json")
    diff.add_argument("new", type=Path, metavar="NEW/report.json")
    pack = commands.add_parser(
        "bundle",
        help="pack a run's report, evidence and hashes into one zip for verify",
        description=plain(_bundle.__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pack.add_argument(
        "report_dir", type=Path, metavar="REPORT_DIR", help="--conformance-report's DIR"
    )
    pack.add_argument("-o", "--output", type=Path, required=True, metavar="ZIP")
    pack.add_argument(
        "--expectations",
        type=Path,
        metavar="FILE",
        help="the expectations file the run used, if it is no longer where the run read it",
    )
    check = commands.add_parser(
        "verify",
        help="check a bundle: hashes, spec, and every verdict recomputed; exit 1 on a mismatch",
    )
    check.add_argument("bundle", type=Path, metavar="ZIP")
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
    costs.add_argument(
        "--refuted",
        nargs="+",
        default=[],
        metavar="FILE",
        help="self-check outputs whose surviving faults take their kill back from every test "
        "that ran under them there (a kill the whole matrix saw that a plan's run did not)",
    )
    plan = commands.add_parser("plan", help="show what a plan runs and spends")
    plan.add_argument("name", choices=PLANS)
    plan.add_argument("--tests", action="store_true", help="list the tests too")
    plan.add_argument(
        "--target",
        metavar="PROFILE",
        help="also forecast its minutes on the buckets this profile declares, as a run prints "
        "before its first test (no request is sent)",
    )
    plan.add_argument(
        "--max-minutes",
        type=float,
        metavar="M",
        help="with --target: where the forecast is over M minutes, how many keys per class "
        "(a pool, keys.full: [...]) would bring it under",
    )
    expected = commands.add_parser(
        "expectations",
        help="write an expectations file (YAML, to standard output) from a run's report: "
        "its failed rules and tests, each with its failure's first line as the reason",
    )
    expected.add_argument("--from", dest="report", type=Path, required=True, metavar="REPORT_JSON")
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
    # What follows "--" after run goes to pytest untouched (argparse would read it).
    passed: list[str] = []
    if argv[:1] in (["run"], ["replay"]) and "--" in argv:
        cut = argv.index("--")
        argv, passed = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    if args.command == "run":
        return _run(args.target, args.plan, args.conformance_report, passed)
    if args.command == "init":
        return _init(args.path)
    if args.command == "replay":
        return _replay.main(args.report, args.target, args.output, passed)
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
    if args.command == "diff":
        return _diff.main(args.old, args.new)
    if args.command == "bundle":
        return _bundle.bundle_main(args.report_dir, args.output, args.expectations)
    if args.command == "verify":
        return _verify.verify_main(args.bundle)
    if args.command == "costs":
        return costs_main(args.output, args.from_report, args.kill_matrix, args.refuted)
    if args.command == "expectations":
        return expectations_from(args.report)
    return _plan(args.name, args.tests, args.target, args.max_minutes)


if __name__ == "__main__":
    raise SystemExit(main())
