"""The watchlist match check (read-only, identity and vehicle hits merged, one match per entry)
and the visitors on record that a watchlist or one entry catches.

Visitors come from invitations: a visitor is registered first, then an entry naming the
visitor's identity number is added, and the visitors lists are read.
"""

from __future__ import annotations

import uuid as uuidlib
from typing import Any

import pytest

from amws_conformance.fixtures._limits import length_range
from amws_conformance.suites.rules._invites import InviteCalls, run_invitations, shared_host
from amws_conformance.suites.rules._watchlists import dropped, run_spare, run_watchlists

WATCHLISTS = "/api/ws/v1/watchlists"
MATCH = f"{WATCHLISTS}/match"
IDENTITY_FIELDS = ("identityNumber", "passportNr", "firstName", "lastName", "mobileNumber")
VEHICLE_FIELDS = ("vehicleLicensePlate", "vehicleVin")


# -- helpers -----------------------------------------------------------------------------
def _created(response: Any) -> str:
    assert response.status_code == 201, (response.status_code, response.text)
    return response.json()["uuid"]


def _watchlist(api: Any, factories: Any) -> str:
    return _created(api.post(WATCHLISTS, json=factories.watchlist()))


def _entry(api: Any, watchlist: str, body: dict[str, Any]) -> str:
    return _created(api.post(f"{WATCHLISTS}/{watchlist}/entries", json=body))


def _values(factories: Any) -> dict[str, str]:
    """Run-tagged values for all seven identifying fields: they can match nothing else."""
    # Not from the seeded factories: parallel workers share the seed, never a uuid4.
    vehicle = uuidlib.uuid4().hex[:12].upper()
    return {
        "identityNumber": factories.tag("wid"),
        "passportNr": factories.tag("pp"),
        "firstName": factories.tag("fn"),
        "lastName": factories.tag("ln"),
        "mobileNumber": factories.tag("mob"),
        "vehicleLicensePlate": f"AM{vehicle}",
        "vehicleVin": f"AMWSVIN{vehicle}X",
    }


def _match(api: Any, body: dict[str, Any]) -> dict[str, Any]:
    response = api.post(MATCH, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def _mine(answer: dict[str, Any], entries: set[str]) -> list[dict[str, Any]]:
    return [m for m in answer["matches"] if m["entryUuid"] in entries]


# -- shared records ----------------------------------------------------------------------
# Tests that only need *a* watchlist to hold their entries share the run's two
# (``_watchlists.run_watchlists``, whose docstring says why that is safe). Every entry put in
# them here carries run-tagged values of its own (``_values``, ``factories.tag``) that no other
# test's entries, visitors or match requests carry, so the tests cannot see each other's
# entries; they assert only about the entries they made, never about a shared watchlist's
# whole contents (the visitors tests' ``caught`` is the one set of visitors the first
# watchlist catches).
@pytest.fixture
def shared(amws_run: Any, api: Any, factories: Any) -> tuple[str, str]:
    return run_watchlists(amws_run, api, factories)


@pytest.fixture
def host(amws_run: Any, api: Any, factories: Any) -> str:
    """The run's shared host (``_invites.shared_host``) for every invitation of the module: the
    visitors tests only need someone to register their visitors (nothing here reads the host)."""
    return str(shared_host(amws_run, api, factories)["uuid"])


# -- the request -------------------------------------------------------------------------
@pytest.mark.rule("WL-MATCH-FIELD-REQUIRED")
def test_match_needs_a_field(api) -> None:
    assert api.post(MATCH, json={}).status_code == 422
    assert api.post(MATCH, json={"reason": "no identifying field"}).status_code == 422


@pytest.mark.rule("WL-MATCH-FIELD-LENGTH")
@pytest.mark.parametrize("field", IDENTITY_FIELDS + VEHICLE_FIELDS)
def test_match_field_lengths(api, factories, field: str) -> None:
    high = length_range("matchWatchlists", field)[1]
    value = factories.tag("m")[-high:]
    assert api.post(MATCH, json={field: value.ljust(high + 1, "x")}).status_code == 422
    assert api.post(MATCH, json={field: value.ljust(high, "x")}).status_code == 200


# -- the answer --------------------------------------------------------------------------
@pytest.mark.rule("WL-MATCH-NONE")
def test_no_hit_gives_matched_false(api, factories) -> None:
    assert _match(api, _values(factories)) == {"matched": False, "matches": []}


@pytest.mark.rule("WL-MATCH-SHAPE")
def test_match_answer_shape(api, factories, shared) -> None:
    first, second = shared
    values = _values(factories)
    entry = _entry(api, first, {"identityNumber": values["identityNumber"]})
    other = _entry(api, second, {"vehicleVin": values["vehicleVin"]})
    answer = _match(api, {k: values[k] for k in ("identityNumber", "vehicleVin")})
    assert answer["matched"] is True
    mine = {m["entryUuid"]: m for m in _mine(answer, {entry, other})}
    assert {k: (m["watchlistUuid"], m["entryUuid"]) for k, m in mine.items()} == {
        entry: (first, entry),
        other: (second, other),
    }
    kinds = [mine[entry]["matchType"], mine[other]["matchType"]]
    assert all(isinstance(kind, str) and kind for kind in kinds), kinds
    for match in answer["matches"]:  # each entry belongs to the watchlist beside it
        path = f"{WATCHLISTS}/{match['watchlistUuid']}/entries/{match['entryUuid']}"
        assert api.get(path).status_code == 200


# The fields an entry is hit by, with the kind of hit (our matchType values, WL-MATCH-TYPE).
FIELD_KINDS = [
    (("identityNumber",), "IDENTITY"),
    (("passportNr",), "IDENTITY"),
    (("mobileNumber",), "IDENTITY"),
    (("firstName", "lastName"), "IDENTITY"),
    (("vehicleLicensePlate",), "VEHICLE"),
    (("vehicleVin",), "VEHICLE"),
]


@pytest.mark.rule("WL-MATCH-TYPE")
@pytest.mark.parametrize(("fields", "kind"), FIELD_KINDS)
def test_match_type_names_the_kind_of_field(api, factories, shared, fields, kind: str) -> None:
    values = _values(factories)
    body = {f: values[f] for f in fields}
    entry = _entry(api, shared[0], body)
    assert [m["matchType"] for m in _mine(_match(api, body), {entry})] == [kind]


@pytest.mark.rule("WL-MATCH-TYPE-KINDS")
def test_match_type_is_one_value_per_kind_of_field(api, factories, shared) -> None:
    """Whatever the values are called, every identity field hits with one value and every
    vehicle field with another."""
    kinds: dict[str, set[str]] = {"IDENTITY": set(), "VEHICLE": set()}
    # One entry carries all seven fields; each check sends the fields of one kind only, so
    # the hit it answers is the hit of those fields.
    values = _values(factories)
    entry = _entry(api, shared[0], values)
    for fields, kind in FIELD_KINDS:  # the kind labels ours; the values the target's
        body = {f: values[f] for f in fields}
        found = [m["matchType"] for m in _mine(_match(api, body), {entry})]
        assert len(found) == 1, (fields, found)
        kinds[kind].add(found[0])
    assert len(kinds["IDENTITY"]) == 1, f"identity fields hit with {sorted(kinds['IDENTITY'])}"
    assert len(kinds["VEHICLE"]) == 1, f"vehicle fields hit with {sorted(kinds['VEHICLE'])}"
    assert kinds["IDENTITY"] != kinds["VEHICLE"], "identity and vehicle hits look the same"


@pytest.mark.rule("WL-MATCH-IDENTITY-AND-VEHICLE")
def test_identity_and_vehicle_hits_are_merged(api, factories, shared) -> None:
    watchlist = shared[0]
    person, car = _values(factories), _values(factories)
    by_identity = _entry(api, watchlist, {"identityNumber": person["identityNumber"]})
    by_plate = _entry(api, watchlist, {"vehicleLicensePlate": car["vehicleLicensePlate"]})
    body = {
        "identityNumber": person["identityNumber"],
        "vehicleLicensePlate": car["vehicleLicensePlate"],
    }
    answer = _match(api, body)
    found = {m["entryUuid"]: m["matchType"] for m in _mine(answer, {by_identity, by_plate})}
    assert found == {by_identity: "IDENTITY", by_plate: "VEHICLE"}


@pytest.mark.rule("WL-MATCH-DEDUP")
@pytest.mark.parametrize("kind", ["identity", "vehicle"])
def test_several_hits_on_one_entry_count_once(api, factories, shared, kind: str) -> None:
    values = _values(factories)
    fields = IDENTITY_FIELDS if kind == "identity" else VEHICLE_FIELDS
    body = {f: values[f] for f in fields}
    entry = _entry(api, shared[0], body)
    answer = _match(api, body)
    assert len(_mine(answer, {entry})) == 1
    assert len(answer["matches"]) == len({m["entryUuid"] for m in answer["matches"]})


@pytest.mark.rule("WL-MATCH-READ-ONLY")
def test_match_changes_no_watchlist_or_entry(api, factories) -> None:
    # A watchlist of its own: the test reads its whole entries list.
    watchlist = _watchlist(api, factories)
    values = _values(factories)
    entry = _entry(api, watchlist, values)
    before = (
        api.get(f"{WATCHLISTS}/{watchlist}").json(),
        api.get(f"{WATCHLISTS}/{watchlist}/entries").json(),
    )
    assert _match(api, values)["matched"] is True
    after = (
        api.get(f"{WATCHLISTS}/{watchlist}").json(),
        api.get(f"{WATCHLISTS}/{watchlist}/entries").json(),
    )
    assert after == before
    assert [e["uuid"] for e in after[1]["entries"]] == [entry]
    dropped(api, watchlist)


@pytest.mark.rule("WL-MATCH-READ-ONLY")
@pytest.mark.requires("control")
def test_match_writes_nothing(api, factories, shared, control) -> None:
    # The shared watchlist: nothing else writes to it while this test runs (module fixtures
    # are per worker, and a worker runs one test at a time).
    watchlist = shared[0]
    values = _values(factories)
    _entry(api, watchlist, values)

    def state() -> tuple[Any, ...]:
        return control.audit(), api.get(WATCHLISTS).json()

    audit_before, lists_before = state()
    for _ in range(2):
        assert _match(api, values)["matched"] is True
    audit_after, lists_after = state()
    new = audit_after[len(audit_before) :]
    # Other runs may write meanwhile; none of what was added may come from the checks.
    assert [r for r in new if "match" in str(r).lower() or r.get("target") in ("", None)] == []
    mine = [w for w in lists_after if w["uuid"] == watchlist]
    assert mine == [w for w in lists_before if w["uuid"] == watchlist]


# -- visitors ----------------------------------------------------------------------------
@pytest.fixture
def caught(
    amws_run: Any,
    api: Any,
    factories: Any,
    host: str,
    shared: tuple[str, str],
    control_or_none: Any,
) -> dict[str, Any]:
    """Two visitors caught by one entry each of the first shared watchlist, and one visitor no
    entry catches, made once per run: the visitors of the run's three shared invitations
    (``_invites.run_invitations``, registered before these entries exist, as an enabled
    watchlist would refuse them). Both visitors tests only read them. Their identity numbers
    are run-tagged: no entry of another test catches them, none of these catches another's,
    and no other test's entry catches a visitor on record in that watchlist (see
    ``_watchlists.run_watchlists``)."""
    invitations = run_invitations(amws_run, InviteCalls(api, factories, host, control_or_none))
    assert [made["status"] for made in invitations] == [201] * 3

    def visitor(made: dict[str, Any]) -> dict[str, Any]:
        sent = made["sent"]
        return {
            "uuid": made["created"]["visitorId"],
            "firstName": sent["first_name"],
            "lastName": sent["last_name"],
        }

    def make() -> dict[str, Any]:
        visitors = {m["sent"]["identity_number"]: visitor(m) for m in invitations[:2]}
        entries = {i: _entry(api, shared[0], {"identityNumber": i}) for i in visitors}
        return {"watchlist": shared[0], "visitors": visitors, "entries": entries}

    made = amws_run.shared("visits:caught", make)
    return {**made, "free": visitor(invitations[2])}


@pytest.mark.rule("WL-VISITORS")
def test_watchlist_visitors(api, amws_run, factories, caught) -> None:
    watchlist = caught["watchlist"]
    response = api.get(f"{WATCHLISTS}/{watchlist}/entries/visitors")
    assert response.status_code == 200
    listed = {v["uuid"]: v for v in response.json()}
    assert caught["free"]["uuid"] not in listed
    assert listed == {v["uuid"]: v for v in caught["visitors"].values()}
    # A watchlist without entries: the run's spare one, to which nobody adds an entry.
    empty = run_spare(amws_run, api, factories)
    assert empty.status == 201, empty.status
    assert api.get(f"{WATCHLISTS}/{empty.uuid}/entries/visitors").json() == []


@pytest.mark.rule("WL-ENTRY-VISITORS")
def test_entry_visitors(api, caught) -> None:
    watchlist, visitors = caught["watchlist"], caught["visitors"]
    for identity, entry in caught["entries"].items():
        response = api.get(f"{WATCHLISTS}/{watchlist}/entries/{entry}/visitors")
        assert response.status_code == 200
        assert response.json() == [visitors[identity]]
