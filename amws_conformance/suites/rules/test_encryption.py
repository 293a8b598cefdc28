"""Per-key payload encryption (the profile's ``encrypted`` key): listed fields travel as Base64
AES-256-CBC ciphertext both ways, every other field in plain text.

The harness client encrypts and decrypts for this key on its own; these tests send with its
``raw`` view to see the wire, and encrypt and decrypt with the suite's own AES code
(harness/target/crypto.py).
Responses seen raw skip the global checks: their listed fields hold ciphertext, which the
spec's schemas (lengths, formats) describe in its plain form.
"""

from __future__ import annotations

from typing import Any

import pytest

from amws_conformance import spec
from amws_conformance.harness.target.crypto import decrypt_text, encrypt_text
from amws_conformance.suites.rules._run_shared import shared_pictured
from amws_conformance.suites.rules._watchlists import run_disabled_watchlist

API = "/api/ws/v1"
pytestmark = pytest.mark.requires("encrypted")


@pytest.fixture(scope="module")
def settings(profile) -> dict[str, Any]:
    return profile.data["keys"]["encrypted"]


# The two fixtures below skip a test the key's settings leave unseen before ``watchlist`` (named
# after them) creates anything.
@pytest.fixture(scope="module")
def override(settings: dict[str, Any]) -> set[str]:
    """The key's override list."""
    found = set(settings.get("fields") or [])
    if not found:
        pytest.skip("not configured: keys.encrypted has no override list")
    return found


@pytest.fixture(scope="module")
def without_override(settings: dict[str, Any]) -> None:
    if settings.get("fields"):
        pytest.skip("not configured: keys.encrypted names an override list (the default is unseen)")


def _listed(settings: dict[str, Any]) -> set[str]:
    """The key's override list when it has a non-empty one, else the default list."""
    return set(settings.get("fields") or spec.openapi()["x-default-encrypted-fields"])


def _wire(body: dict[str, Any], fields: set[str], settings: dict[str, Any]) -> dict[str, Any]:
    secret, iv = settings["secret"], settings["iv"]
    return {
        k: encrypt_text(v, secret, iv) if k in fields and isinstance(v, str) else v
        for k, v in body.items()
    }


@pytest.fixture
def watchlist(amws_run: Any, api: Any, factories: Any) -> str:
    """The watchlist holding the sample entries: the run's disabled one
    (``_watchlists.run_disabled_watchlist``, whose docstring says who else uses it). The tests
    add entries to it and read only those back, never the watchlist itself; disabled, it
    refuses no visitor the sample entries might name."""
    return run_disabled_watchlist(amws_run, api, factories)


def _samples(factories: Any, watchlist: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(create path, read path template, plain body) for records with many string fields."""
    entries = f"{API}/watchlists/{watchlist}/entries"
    return [
        (f"{API}/persons", f"{API}/persons/{{}}", factories.person()),
        (entries, f"{entries}/{{}}", factories.watchlist_entry()),
        (
            f"{API}/departments",
            f"{API}/departments/{{}}",
            factories.named("createDepartment", "enc"),
        ),
    ]


def _check_travel(
    api, caller, factories, watchlist: str, settings, encrypted: set[str], plain: set[str]
) -> set[str]:
    """Send and read back records; return the fields of ``encrypted | plain`` it could observe."""
    secret, iv = settings["secret"], settings["iv"]
    seen: set[str] = set()
    for create, read, body in _samples(factories, watchlist):
        strings = {k for k, v in body.items() if isinstance(v, str)}
        made = caller.raw.unchecked.post(create, json=_wire(body, encrypted, settings))
        assert made.status_code == 201, (create, made.status_code)
        uuid = made.json()["uuid"]
        # The service decrypted the listed fields before use: the full key reads plain text.
        stored = api.get(read.format(uuid)).json()
        for field in strings & (encrypted | plain):
            assert stored[field] == body[field], f"{field} was stored as sent on the wire"
        # ... and the same fields come back encrypted to this key, the others in plain text.
        wire = caller.raw.unchecked.get(read.format(uuid)).json()
        for field in strings & encrypted:
            assert wire[field] != body[field], f"{field} came back in plain text"
            assert decrypt_text(wire[field], secret, iv) == body[field], field
        for field in strings & plain:
            assert wire[field] == body[field], f"{field} is off the list but came back changed"
        seen |= strings & (encrypted | plain)
    return seen


@pytest.mark.rule("AUTH-PAYLOAD-ENCRYPTION")
def test_listed_fields_are_encrypted_both_ways_and_others_are_plain(
    api, client, factories, watchlist, settings
) -> None:
    listed = _listed(settings)
    samples = {"firstName", "lastName", "email", "mobile", "identityNumber", "name", "reason"}
    caller = client("encrypted")
    seen = _check_travel(api, caller, factories, watchlist, settings, listed, samples - listed)
    if not seen & listed:
        pytest.skip("not configured: the key's encrypted fields occur in none of the samples")
    assert seen - listed, "no field off the list was observed"


@pytest.mark.rule("AUTH-PAYLOAD-ENCRYPTION")
def test_listed_fields_in_lists_are_encrypted(api, client, factories, settings, amws_run) -> None:
    """Listed fields are encrypted wherever they occur, also inside a search's entries."""
    listed = _listed(settings) & {"firstName", "lastName", "email", "mobile"}
    if not listed:
        pytest.skip("not configured: the key encrypts no field of a person search row")
    # The run's shared person (a search only reads it), its last name run-tagged.
    person = shared_pictured(amws_run, api, factories)["body"]
    caller = client("encrypted")
    query = _wire({"lastName": person["lastName"]}, _listed(settings), settings)
    found = caller.raw.unchecked.post(f"{API}/persons/search", json=query)
    assert found.status_code == 200
    rows = found.json()["entries"]
    assert len(rows) == 1, "the search (with its criterion decrypted) finds the person"
    for field in listed:
        assert decrypt_text(rows[0][field], settings["secret"], settings["iv"]) == person[field]


@pytest.mark.rule("AUTH-ENCRYPTION-OVERRIDE-LIST")
def test_override_list_replaces_the_default_list(
    api, client, factories, settings, override, watchlist
) -> None:
    default = set(spec.openapi()["x-default-encrypted-fields"])
    seen = _check_travel(
        api, client("encrypted"), factories, watchlist, settings, override, default - override
    )
    if not seen & (default - override):
        pytest.skip("not configured: every sample default field is also on the override list")
    assert seen & override, "no override-list field was observed"


@pytest.mark.rule("AUTH-ENCRYPTION-DEFAULT-FIELDS")
def test_default_list_is_encrypted_without_an_override(
    api, client, factories, settings, without_override, watchlist
) -> None:
    default = set(spec.openapi()["x-default-encrypted-fields"])
    plain = {"firstName", "lastName", "name"} - default
    seen = _check_travel(api, client("encrypted"), factories, watchlist, settings, default, plain)
    assert seen & default, "no default-list field was observed"
