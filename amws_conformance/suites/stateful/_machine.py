"""What the stateful suites share: hypothesis settings and an API caller that writes notes.

Every call a machine makes goes through :class:`Calls`, which sends it with the harness client
(paced, guarded, checked, recorded in the cleanup ledger) and ``note()``s it as one short line
such as ``PUT /departments/{department 2} {"name": "dept-7"} -> 409``. A shrunk failure then
reads as the sequence of API calls that broke the model.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, Phase, note, settings

from amws_conformance import spec
from amws_conformance.harness import ExampleBudget, Run

API = "/api/ws/v1"
DEFAULT_RUNS = 10  # machine runs per test in CI; raise with --examples or the profile
_UUID = spec.uuid_pattern()


def machine_settings(steps: int, runs: int = DEFAULT_RUNS) -> settings:
    """Deterministic settings, ``runs`` machine runs unless the run says otherwise (the
    run's budget is put on them when the test runs, by :func:`for_run`)."""
    return settings(
        max_examples=runs,
        stateful_step_count=steps,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        # Each step talks to the target, so a run is slow by hypothesis's measure.
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


def _clip(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def for_run(base: settings, run: Run, budget: ExampleBudget) -> settings:
    """``base`` with the run's example budget (``--examples``, the profile's ``examples``),
    and without the shrink phase when the run is a self-check against a reference fault: there
    only the failure counts, and shrinking replays a machine hundreds of times."""
    chosen = settings(base, max_examples=budget.examples_or(base.max_examples))
    if not run.variant:  # an ordinary run: the self-check sets the faults it switched on
        return chosen
    return settings(chosen, phases=[p for p in chosen.phases if p is not Phase.shrink])


class Ref:
    """A record a machine created: its uuid, a short label for notes and reprs, and whether
    the machine deleted it (bundles keep deleted records, so rules can filter on ``gone``)."""

    def __init__(self, kind: str, uuid: str, number: int) -> None:
        self.kind, self.uuid, self.label = kind, uuid, f"{kind} {number}"
        self.gone = False

    def __repr__(self) -> str:
        return f"<{self.label}>"


class Calls:
    """Sends requests through one harness client and notes each as an API call."""

    def __init__(self, client: Any, run_id: str) -> None:
        self.client = client
        self.prefix = f"amws-{run_id}-"
        self.labels: dict[str, str] = {}
        self.counts: dict[str, int] = {}

    def ref(self, kind: str, uuid: str) -> Ref:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        made = Ref(kind, uuid, self.counts[kind])
        self.labels[uuid.lower()] = made.label
        return made

    def show(self, value: Any) -> str:
        """Text with run prefixes dropped and known UUIDs replaced by their labels."""
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text = text.replace(API, "").replace(self.prefix, "")
        return _UUID.sub(lambda m: "{" + self.labels.get(m.group(0).lower(), "uuid") + "}", text)

    def __call__(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        expect: int | None = None,
        quiet: bool = False,
        **kw: Any,
    ) -> httpx.Response:
        """One request; ``quiet`` leaves the note to the caller (a burst notes a summary)."""
        response = self.client.request(method, path, json=json, **kw)
        if not quiet:
            body = "" if json is None else " " + _clip(self.show(json))
            note(f"{method} {self.show(path)}{body} -> {response.status_code}")
        if expect is not None:
            assert response.status_code == expect, (
                f"{method} {self.show(path)} answered {response.status_code}, the model expects "
                f"{expect}: {self.show(response.text[:300])}"
            )
        return response

    def created(self, kind: str, path: str, body: Any) -> Ref:
        """POST that must answer 201; the new record's reference."""
        response = self("POST", path, json=body, expect=201).json()
        return self.ref(kind, response.get("registrationId") or response["uuid"])

    def read(self, path: str) -> Any:
        return self("GET", path, expect=200).json()
