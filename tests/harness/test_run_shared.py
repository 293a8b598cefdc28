"""Values a run shares among tests: one per variant of the target (each fault the self-check
switches on), dropped after a failure."""

from __future__ import annotations

from amws_conformance.harness._run import Run
from amws_conformance.harness.lifecycle.ledger import Ledger
from amws_conformance.harness.target.session import Session


def _run() -> Run:
    run = Run(target="unused.yaml")
    run.session = Session(base_url="http://target.test", ledger=Ledger(), secrets=[])
    return run


def test_a_value_is_made_once_and_each_user_is_recorded() -> None:
    run, made = _run(), []
    assert run.session is not None
    for test in ("t1", "t2"):
        run.session.current_test = test
        assert run.shared("holder", lambda: made.append(1) or len(made)) == 1
    assert made == [1]
    assert all("setup:holder" in run.session.spend.uses[t] for t in ("t1", "t2"))


def test_each_variant_gets_a_value_of_its_own() -> None:
    run, made = _run(), []
    first = run.shared("holder", lambda: made.append("none") or "none")
    run.variant = ("cross-system-read",)
    second = run.shared("holder", lambda: made.append("fault") or "fault")
    assert (first, second) == ("none", "fault")


def test_a_failed_test_drops_what_it_used() -> None:
    run, made = _run(), []
    assert run.session is not None
    run.session.current_test = "t1"
    run.shared("holder", lambda: made.append(1) or 1)
    run.shared("other", lambda: "kept")
    run.session.current_test = "t2"
    run.shared("other", lambda: "fresh")
    run.drop_shared_of("t1")
    run.session.current_test = "t3"
    assert run.shared("holder", lambda: made.append(2) or 2) == 2
    assert run.shared("other", lambda: "fresh") == "fresh"  # t1 used it too
