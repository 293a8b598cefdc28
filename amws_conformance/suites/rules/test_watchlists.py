"""Watchlists: name rules, the read shape, switching on and off (and what arrival consults),
deleting, and the audit trail of watchlist and entry writes.

Arrival is observed through invitations: an invitation for a visitor caught by an enabled
watchlist is refused with 451, one caught only by a disabled watchlist is created (201).
"""

from __future__ import annotations

from typing import Any

import pytest

from amws_conformance.fixtures._limits import length_range
from amws_conformance.suites.rules._invites import shared_host
from amws_conformance.suites.rules._watchlists import Made, made_from, run_spare

WATCHLISTS = "/api/ws/v1/watchlists"
INVITES = "/api/ws/v1/invites"


# -- helpers -----------------------------------------------------------------------------
def _created(response: Any) -> str:
    assert response.status_code == 201, (response.status_code, response.text)
    return response.json()["uuid"]


def _watchlist(api: Any, factories: Any, **overrides: Any) -> str:
    return _created(api.post(WATCHLISTS, json=factories.watchlist(**overrides)))


def _entry(api: Any, watchlist: str, body: dict[str, Any]) -> str:
    return _created(api.post(f"{WATCHLISTS}/{watchlist}/entries", json=body))


def _read(api: Any, watchlist: str) -> dict[str, Any]:
    response = api.get(f"{WATCHLISTS}/{watchlist}")
    assert response.status_code == 200, response.text
    return response.json()


def _name(factories: Any, length: int) -> str:
    return factories.name_for("createWatchlist", "wl").ljust(length, "x")[:length]


def _invite_status(api: Any, factories: Any, host: str, identity: str) -> int:
    """Status of an invitation for a visitor carrying ``identity`` as identity number."""
    body = factories.invite(host, identityNumber=identity)
    return api.post(INVITES, json=body).status_code


def _listed_entry(factories: Any) -> dict[str, Any]:
    """An entry identifying a person by identity number only (nobody else can match it)."""
    return {"identityNumber": factories.tag("wid"), "reason": "conformance run"}


def _dropped(api: Any, watchlist: str) -> None:
    """Delete ``watchlist``: its entries go with it, so the cleanup sends one delete, not one
    per entry (not asserted here: test_delete_removes_the_watchlist_and_its_entries is)."""
    api.delete(f"{WATCHLISTS}/{watchlist}")


# -- shared records ----------------------------------------------------------------------
@pytest.fixture
def spare(amws_run: Any, api: Any, factories: Any) -> str:
    """The run's spare watchlist (``_watchlists.run_spare``: enabled, no entries, its name as
    short as allowed) for tests whose updates of it must be refused, which compare its read
    before and after within themselves, and for the test that switches it off and on again:
    that leaves it on, as it found it, and nobody else reads ``enabled`` of it. Tests that
    rename or delete a watchlist, or read its entries, keep their own."""
    made = run_spare(amws_run, api, factories)
    assert made.status == 201, made.status
    return str(made.uuid)


@pytest.fixture
def longest(amws_run: Any, api: Any, factories: Any) -> Made:
    """A watchlist made once per run from a name as long as allowed and nothing else (so it
    takes the default ``enabled``): its create is the name-length test's longest name accepted,
    and the test of the default reads its ``enabled``. Nobody switches it; the name-length
    test's updates of it must be refused."""
    high = length_range("createWatchlist", "name")[1]
    return amws_run.shared(
        "watchlists:longest", lambda: made_from(api, {"name": _name(factories, high)})
    )


@pytest.fixture
def host(amws_run: Any, api: Any, factories: Any) -> str:
    """The run's shared host (``_invites.shared_host``) for the module's invitations: they only
    need someone to name as host, and whether an invitation is refused depends on the visitor,
    never on the host."""
    return str(shared_host(amws_run, api, factories)["uuid"])


# -- fields ------------------------------------------------------------------------------
@pytest.mark.rule("WL-FIELD-REQUIRED")
def test_name_is_required(api, spare) -> None:
    assert api.post(WATCHLISTS, json={"enabled": True}).status_code == 422
    assert api.post(WATCHLISTS, json={}).status_code == 422
    assert all(w.get("name") for w in api.get(WATCHLISTS).json())  # no nameless one stored
    uuid = spare
    stored = _read(api, uuid)
    assert api.put(f"{WATCHLISTS}/{uuid}", json={"enabled": False}).status_code == 422
    assert _read(api, uuid) == stored


@pytest.mark.rule("WL-FIELD-LENGTH")
def test_name_length_limits(api, factories, amws_run, longest) -> None:
    low, high = length_range("createWatchlist", "name")
    # The shortest and the longest name accepted: the run's shared watchlists made from them.
    shortest = run_spare(amws_run, api, factories)
    for made, length in ((shortest, low), (longest, high)):
        assert (len(made.body["name"]), made.status) == (length, 201), made
    for length in (low - 1, high + 1):
        # Short names cannot carry the run tag: one of the run's own short names.
        name = _name(factories, length) if length > low else factories.short_name(length)
        response = api.post(WATCHLISTS, json={"name": name})
        assert response.status_code == 422, (length, response.status_code)
        assert "name" in response.json()["reason"]
    for length in (low - 1, high + 1):  # the longest-named one takes the updates
        body = {"name": "y" * length}
        assert api.put(f"{WATCHLISTS}/{longest.uuid}", json=body).status_code == 422


@pytest.mark.rule("WL-ENABLED-DEFAULT")
def test_new_watchlist_is_enabled(api, longest) -> None:
    assert "enabled" not in longest.body and longest.status == 201
    assert _read(api, str(longest.uuid))["enabled"] is True


@pytest.mark.rule("WL-NAME-DUPLICATE")
def test_names_are_unique(api, factories, spare) -> None:
    first = factories.watchlist()
    uuid = _created(api.post(WATCHLISTS, json=first))
    assert api.post(WATCHLISTS, json={"name": first["name"]}).status_code == 409
    other = spare
    stored = _read(api, other)
    response = api.put(f"{WATCHLISTS}/{other}", json={"name": first["name"], "enabled": False})
    assert response.status_code == 409
    assert _read(api, other) == stored
    named = [w for w in api.get(WATCHLISTS).json() if w["name"] == first["name"]]
    assert [w["uuid"] for w in named] == [uuid]


# -- reads -------------------------------------------------------------------------------
@pytest.mark.rule("WL-READ")
def test_watchlists_listed_and_read(api, factories) -> None:
    body = factories.watchlist(enabled=False)
    uuid = _created(api.post(WATCHLISTS, json=body))
    _entry(api, uuid, _listed_entry(factories))
    expected = {"uuid": uuid, "name": body["name"], "enabled": False, "entryCount": 1}
    assert _read(api, uuid) == expected
    response = api.get(WATCHLISTS)
    assert response.status_code == 200
    assert expected in response.json()
    _dropped(api, uuid)


@pytest.mark.rule("WL-NOT-FOUND")
def test_unknown_watchlist_answers_404(api, factories, ledger) -> None:
    unknown = f"{WATCHLISTS}/{ledger.fresh_uuid()}"
    assert api.get(unknown).status_code == 404
    assert api.put(unknown, json=factories.watchlist()).status_code == 404
    assert api.delete(unknown).status_code == 404
    assert api.get(f"{unknown}/entries").status_code == 404
    assert api.get(f"{unknown}/entries/visitors").status_code == 404


# -- on and off --------------------------------------------------------------------------
@pytest.mark.rule("WL-DISABLE-BY-PUT", "WL-ENABLE-BY-PUT")
def test_put_switches_a_watchlist_off_and_on(api, spare) -> None:
    uuid = spare  # enabled; switched off and on again, so it is left as it was
    body = {"name": _read(api, uuid)["name"]}
    assert api.put(f"{WATCHLISTS}/{uuid}", json={**body, "enabled": False}).status_code == 200
    assert _read(api, uuid)["enabled"] is False
    assert api.put(f"{WATCHLISTS}/{uuid}", json={**body, "enabled": True}).status_code == 200
    assert _read(api, uuid)["enabled"] is True


@pytest.mark.rule("WL-CONSULTED-ON-ARRIVAL", "WL-DISABLED-NOT-CONSULTED", "WL-ENABLE-BY-PUT")
def test_only_enabled_watchlists_are_consulted_on_registration(api, factories, host) -> None:
    body = factories.watchlist(enabled=False)
    uuid = _created(api.post(WATCHLISTS, json=body))
    entry = _listed_entry(factories)
    _entry(api, uuid, entry)
    # Listed only in a disabled watchlist: registered as if unlisted.
    assert _invite_status(api, factories, host, entry["identityNumber"]) == 201
    assert api.put(f"{WATCHLISTS}/{uuid}", json={**body, "enabled": True}).status_code == 200
    # Switched on again: consulted again, so the same visitor is refused.
    assert _invite_status(api, factories, host, entry["identityNumber"]) == 451
    assert api.put(f"{WATCHLISTS}/{uuid}", json={**body, "enabled": False}).status_code == 200
    assert _invite_status(api, factories, host, entry["identityNumber"]) == 201
    _dropped(api, uuid)


@pytest.mark.rule("WL-CONSULTED-ON-ARRIVAL")
def test_every_enabled_watchlist_is_consulted(api, factories, host) -> None:
    entries, watchlists = [], []
    for _ in range(2):
        entry = _listed_entry(factories)
        watchlists.append(_watchlist(api, factories))
        _entry(api, watchlists[-1], entry)
        entries.append(entry)
    for entry in entries:
        assert _invite_status(api, factories, host, entry["identityNumber"]) == 451
    assert _invite_status(api, factories, host, factories.tag("clean")) == 201
    for watchlist in watchlists:
        _dropped(api, watchlist)


# -- delete ------------------------------------------------------------------------------
@pytest.mark.rule("WL-DELETE-HARD", "WL-DELETE-HARDWARE-FIRST")
def test_delete_removes_the_watchlist_and_its_entries(api, factories) -> None:
    uuid = _watchlist(api, factories)
    entries = [_listed_entry(factories) for _ in range(2)]
    uuids = [_entry(api, uuid, entry) for entry in entries]
    assert api.delete(f"{WATCHLISTS}/{uuid}").status_code == 200
    assert api.get(f"{WATCHLISTS}/{uuid}").status_code == 404
    assert uuid not in {w["uuid"] for w in api.get(WATCHLISTS).json()}
    for entry, entry_uuid in zip(entries, uuids, strict=True):
        assert api.get(f"{WATCHLISTS}/{uuid}/entries/{entry_uuid}").status_code == 404
        # Nothing of the watchlist is left to match (no record, no flag).
        response = api.post(f"{WATCHLISTS}/match", json={"identityNumber": entry["identityNumber"]})
        assert response.status_code == 200
        assert response.json() == {"matched": False, "matches": []}


@pytest.mark.rule("WL-DELETE-HARDWARE-FIRST")
@pytest.mark.requires("control")
def test_delete_withdraws_hardware_flags_before_removing(api, factories, control) -> None:
    uuid = _watchlist(api, factories)
    entries = {_entry(api, uuid, _listed_entry(factories)) for _ in range(2)}
    flags = control.watchlist_flags()["flags"]
    raised = {f["entryUuid"] for f in flags if f["watchlistUuid"] == uuid}
    assert raised == entries
    assert api.delete(f"{WATCHLISTS}/{uuid}").status_code == 200
    after = control.watchlist_flags()
    assert not [f for f in after["flags"] if f["watchlistUuid"] == uuid]
    log = [e["action"] for e in after["log"] if e["watchlistUuid"] == uuid]
    withdrawn = [i for i, action in enumerate(log) if action == "flag_withdrawn"]
    assert len(withdrawn) == len(entries)
    assert max(withdrawn) < log.index("watchlist_removed")


# -- audit -------------------------------------------------------------------------------
@pytest.mark.rule("WL-AUDIT-KEY-NAME")
@pytest.mark.requires("control")
@pytest.mark.one_key  # every write names the key that made it: one key, not a pool
def test_watchlist_writes_are_audited_by_key_name(api, factories, profile, control) -> None:
    body = factories.watchlist()
    uuid = _created(api.post(WATCHLISTS, json=body))
    entry = _entry(api, uuid, _listed_entry(factories))
    path = f"{WATCHLISTS}/{uuid}"
    assert api.put(f"{path}/entries/{entry}", json=_listed_entry(factories)).status_code == 200
    assert api.put(path, json={**body, "enabled": False}).status_code == 200
    assert api.delete(f"{path}/entries/{entry}").status_code == 200
    assert api.delete(path).status_code == 200
    records = [r for r in control.audit() if r.get("target") in (uuid, entry)]
    by_target = {t: [r for r in records if r["target"] == t] for t in (uuid, entry)}
    # Watchlist: create, update, delete; entry: create, update, delete.
    assert len(by_target[uuid]) >= 3 and len(by_target[entry]) >= 3, records
    names = {r.get("key") for r in records}
    assert len(names) == 1, names
    name = names.pop()
    assert name and isinstance(name, str)
    assert name != profile.key("full")  # the key's name, never its secret value
