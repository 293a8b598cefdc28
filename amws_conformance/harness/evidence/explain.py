"""What report.html says beside its figures: what each figure of the header means, the curl
command of a failure's deciding exchange, and what a replayed report carries over.

Kept apart from ``harness/evidence/html.py`` (the page's layout); it reads report.json alone, as the
page does. Every figure of the header gets one line here, naming what it counts and, where a
figure is not zero and might look like a problem (a 429 the run did not ask for), which
request it was and why it is, or is not, a failure.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from amws_conformance.harness.evidence.curl import deciding, used_variables


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _unplanned(units: Mapping[str, Any]) -> str:
    count = int(units.get("unplanned_429", 0) or 0)
    if not count:
        return (
            "429 answers the run did not provoke. 0: the client's model of each bucket (from "
            "the profile's rate_limits) kept every request within what the target allows."
        )
    where = units.get("unplanned_429_where") or {}
    listed = "; ".join(f"{w}, {n} times" if n > 1 else str(w) for w, n in list(where.items())[:5])
    return (
        f"429 answers the run did not provoke: {count} ({listed or 'where not recorded'}). "
        "Not a failure of the target: a 429 is the documented answer to a drained bucket, and "
        "the bucket held less than the client's model said (another client spending on the "
        "same key, or a bucket smaller than the profile declares). The client waited as "
        "Retry-After said and sent the request again; its answer is what the test judged."
    )


def figures(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(figure, what it means) for every figure the header shows, in its order."""
    plan = doc.get("plan") or {}
    units = doc.get("rate_units") if isinstance(doc.get("rate_units"), Mapping) else None
    said = [
        ("target", "the profile's name and base_url (the embedded reference server if none)"),
        ("run id", "names this run's records (their tag) and its ledger file for a sweep"),
        (
            "seed",
            "seeds the payload factories and the property-based suites: --seed N "
            "(and amws-conformance replay) sends the same payloads again",
        ),
        (
            "plan",
            f"the tests the plan '{plan.get('name', '-')}' ran; 'left out': tests of the suites "
            "the plan did not select (their rules read not run (plan)); the forecast is the "
            "minutes the run was expected to take on the profile's buckets before it began",
        ),
        ("duration", "wall time from the session's start to this report"),
        ("started / generated", "when the run began and when this report was written (UTC)"),
        ("suite", "the conformance suite's name and version"),
        ("OpenAPI", "the version of the contract (spec/openapi.yaml) the run checked against"),
        ("openapi sha256 / rules sha256", "hashes of the contract and the rule catalogue used"),
        (
            "exit status",
            "0 conformant, 1 a certifying rule failed, 6 incomplete (a rule left undecided), "
            "2 interrupted, 4 profile unusable",
        ),
    ]
    if units is not None:
        said.append(
            (
                "units",
                f"units the target charged per key's bucket for the answered requests "
                f"({int(units.get('requests', 0) or 0):,} requests; a 429 costs nothing; "
                "failed_auth: the 400 units of each failed authentication); the three dearest "
                "buckets are shown, report.json's rate_units has all",
            )
        )
        said.append(("429 not asked for", _unplanned(units)))
    if doc.get("stability"):
        said.append(("stability", "a failed test was rerun up to this many times (--stability)"))
    said += [
        (
            "tests",
            "every test of the suites by outcome; not-run counts the plan's left-out tests "
            "and those the clock or an unreachable target stopped",
        ),
        (
            "certifying normative rules",
            "rules the documents state, decided by a test that relies on no assumption of "
            "ours: only these decide the verdict",
        ),
        ("all rules", "the whole catalogue, assumed (informative) rules included"),
    ]
    replay = doc.get("replay")
    if isinstance(replay, Mapping):
        said.append(("replay", replay_note(replay)))
    return said


def figures_block(doc: Mapping[str, Any]) -> str:
    """The explanations as a folded list under the header's figures."""
    rows = "".join(f"<dt>{_esc(name)}</dt><dd>{_esc(text)}</dd>" for name, text in figures(doc))
    return (
        "<details class='note' id='figures'><summary>what these figures mean</summary>"
        f"<dl>{rows}</dl></details>"
    )


def replay_note(replay: Mapping[str, Any]) -> str:
    """One sentence on what a replayed report holds."""
    return (
        f"this report is a replay of run {replay.get('of_run_id', '?')} "
        f"({replay.get('of_generated_at', '?')}): {len(replay.get('tests') or ()):,} tests behind "
        "its failed, blocked and flaky rules were run again with its seed; every other test's "
        "outcome is carried over from it, and the verdicts are recomputed from both. Units and "
        "duration are the replay's own"
    )


def replay_banner(doc: Mapping[str, Any]) -> str:
    replay = doc.get("replay")
    if not isinstance(replay, Mapping):
        return ""
    return f"<p class='warn' id='replay'>{_esc(replay_note(replay))}.</p>"


def curl_block(entry: Mapping[str, Any]) -> str:
    """A failure's deciding exchange as a curl command to copy, and the variables it reads."""
    curl = deciding(entry)
    if not curl:
        return ""
    names = used_variables(curl)
    needs = (
        " Set " + ", ".join(f"<code>{_esc(n)}</code>" for n in names) + " to the profile's "
        "values first (the command holds no secret)."
        if names
        else ""
    )
    return (
        "<div class='curl'><p class='note'>The deciding exchange (the test's last), to send "
        f"again:{needs}</p><pre class='curl'>{_esc(curl)}</pre></div>"
    )
