"""The plugin's command-line options and markers."""

from __future__ import annotations

import pytest

from amws_conformance.harness.plan.plan import PLANS

MARKERS = {
    "rule(*ids)": "the rule ids of spec/rules.yaml this test verifies",
    "requires(capability)": "skip unless the profile configures it (a key name, control, "
    "virtual_reader, unattached_reader, webhooks, roles, destructive, embedded: the embedded "
    "reference server only)",
    "physical": "opens a door or fires a relay; runs only with allow.physical or --allow-physical",
    "rate_limit": "exhausts a rate-limit bucket (uses the rate_limit key); implies one_key",
    "one_key": "needs one key's identity: every request of a key class goes with the first key "
    "of its pool, not the fullest (harness/target/pool.py)",
    "webhooks": "needs the webhook receiver",
    "slow": "takes seconds, not milliseconds",
    "covers(*elements)": "coverage elements a run plan asks for beside the rules "
    "(harness/plans.yaml), e.g. permission:Write Users",
}


def add_options(parser: pytest.Parser) -> None:
    """The options of the group *AMWS conformance* in ``pytest --help``."""
    group = parser.getgroup("amws", "AMWS conformance")
    group.addoption(
        "--target",
        metavar="PROFILE",
        default=None,
        help="target profile (YAML); without it the embedded reference server is started",
    )
    group.addoption(
        "--conformance-report",
        metavar="DIR",
        default=None,
        help="write report.json and report.html to DIR",
    )
    group.addoption(
        "--allow-physical",
        action="store_true",
        default=False,
        help="allow tests that open doors or fire relays on the target",
    )
    group.addoption("--run-id", default=None, help="prefix of every name the run creates")
    group.addoption(
        "--seed",
        type=int,
        default=None,
        help=(
            "seed of the payload factories (default: from the run id) and of the contract "
            "suite (default: fixed); printed in the header, replays a run's data"
        ),
    )
    group.addoption(
        "--examples",
        type=int,
        default=None,
        help="example budget per operation of the property-based suites (profile: examples)",
    )
    group.addoption(
        "--rules",
        metavar="IDS",
        default=None,
        help="run only the tests tagged with one of these comma-separated rule ids",
    )
    group.addoption(
        "--plan",
        choices=PLANS,
        default=None,
        help="gate (a small pull-request subset), certify (every certifying normative rule, "
        "cheapest by the measured cost table) or deep (everything); profile: plan; default: "
        "certify unless the profile raises the full key's and the failed-auth buckets",
    )
    group.addoption(
        "--cost-table",
        metavar="FILE",
        default=None,
        help="the measured per-test costs a plan is chosen by (default: the shipped table; "
        "amws-conformance costs --output FILE measures one)",
    )
    group.addoption(
        "--max-minutes",
        type=float,
        default=None,
        metavar="M",
        help="start no test the forecast says would not end, with its cleanup, within M "
        "minutes of the start; those are reported as not run (time)",
    )
    group.addoption(
        "--request-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="the longest one request may take, its whole answer read (profile: "
        "request_timeout; default 30); five requests in a row without an answer stop the run "
        "as target unreachable",
    )
    group.addoption(
        "--state-dir",
        metavar="DIR",
        default=None,
        help="where a run against a target writes its ledger as it goes, for amws-conformance "
        "sweep after a crash (profile: state_dir; default: $AMWS_STATE_DIR, else "
        "~/.local/state/amws-conformance)",
    )
    group.addoption(
        "--no-preflight",
        action="store_true",
        default=False,
        help="skip the key preflight (the self-check's runs do: each test must meet the server)",
    )
    group.addoption(
        "--expectations",
        metavar="FILE",
        default=None,
        help="the known failures (YAML: entries of rule or test, reason, link): they read as "
        "expected fail and do not fail the run; an entry that passes again (stale) fails it; "
        "the verdict ignores them (profile: expectations; amws-conformance expectations "
        "--from report.json writes one)",
    )
    group.addoption(
        "--strict-informative",
        action="store_true",
        default=False,
        help="count failures of assumed rules (our choices where the documents are silent) "
        "in the exit status; without it they are listed and the exit status follows the "
        "certifying verdict: 0 conformant, 1 not conformant, 6 incomplete",
    )
    group.addoption(
        "--stability",
        type=int,
        default=None,
        metavar="N",
        help="rerun each failed test up to N times; one that passes on a rerun is flaky, "
        "listed apart and never counted as passed (profile: stability)",
    )
