"""Each core fault of the catalogue really breaks its rule (the ordinary tests show it holds)."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import httpx

from amws_conformance import spec
from amws_conformance.reference_server.app import create_app
from amws_conformance.reference_server.faults import CATALOGUE

DEPTS = "/api/ws/v1/departments"
LOCATIONS = "/api/ws/v1/locations"
RULE_IDS = {rule.id for rule in spec.rules()}
PACKAGE = Path(__file__).resolve().parents[2] / "amws_conformance"


def test_every_fault_names_an_existing_rule() -> None:
    unknown = {f.name: f.rule for f in CATALOGUE.values() if f.rule not in RULE_IDS}
    assert not unknown


def test_every_fault_is_named_in_one_module_of_the_fault_package_only() -> None:
    """A fault is defined in one place; no other server code names it (the domain never
    asks whether a fault is on)."""
    sources = {
        path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8")
        for path in (PACKAGE / "reference_server").rglob("*.py")
    }
    for name in (n for n, f in CATALOGUE.items() if f.constraint is None):  # mutants: generated
        naming = [p for p, text in sources.items() if f'"{name}"' in text or f"'{name}'" in text]
        assert len(naming) == 1, f"{name} is named in {naming}"
        assert naming[0].startswith("reference_server/faults/"), f"{name} is named in {naming}"


def test_echo_rejected_value(faulty) -> None:
    with faulty("echo-rejected-value").client() as api:
        response = api.post(DEPTS, json={"name": "Q" * 101})
    assert response.status_code == 422 and "Q" * 101 in response.text


def _location(api: httpx.Client, **fields: object) -> dict:
    created = api.post(LOCATIONS, json={"name": "Depot", "type": "AREA", **fields})
    return api.get(f"{LOCATIONS}/{created.json()['uuid']}").json()


def test_offset_ignored(faulty) -> None:
    with faulty("offset-ignored").client() as api:
        record = _location(api, effectiveDate="2026-05-01T10:15:30.500+02:00")
    assert record["effectiveDate"] == "2026-05-01T10:15:30.500Z"


def test_no_milliseconds(faulty) -> None:
    with faulty("no-milliseconds").client() as api:
        record = _location(api, effectiveDate="2026-05-01T10:15:30.500Z")
    assert record["effectiveDate"] == "2026-05-01T10:15:30Z"


def test_bad_uuid_404(faulty) -> None:
    with faulty("bad-uuid-404").client() as api:
        assert api.get(f"{DEPTS}/not-a-uuid").status_code == 404


def test_malformed_json_422(faulty) -> None:
    with faulty("malformed-json-422").client() as api:
        answer = api.post(DEPTS, content=b"{oops", headers={"Content-Type": "application/json"})
        assert answer.status_code == 422


def test_unknown_field_rejected(faulty) -> None:
    with faulty("unknown-field-rejected").client() as api:
        assert api.post(DEPTS, json={"name": "Sales", "colour": "red"}).status_code == 422


def test_write_returns_record(faulty) -> None:
    with faulty("write-returns-record").client() as api:
        body = api.post(DEPTS, json={"name": "Sales"}).json()
    assert "code" not in body and body["name"] == "Sales"


def test_paging_total_wrong(faulty) -> None:
    with faulty("paging-total-wrong").client() as api:
        page = api.get("/api/ws/v1/vehicles", params={"limit": 100}).json()
    assert page["countReturned"] == 100 and page["totalCount"] == 100


def test_bearer_not_stripped(faulty) -> None:
    with faulty("bearer-not-stripped").client("full", bearer=True) as api:
        assert api.get(DEPTS).status_code == 401


def test_disabled_key_accepted(faulty) -> None:
    with faulty("disabled-key-accepted").client("disabled") as api:
        assert api.get(DEPTS).status_code == 200


def test_readonly_can_write(faulty) -> None:
    with faulty("readonly-can-write").client("readonly") as api:
        assert api.post(DEPTS, json={"name": "Sales"}).status_code == 201


def test_relay_control_with_read(faulty) -> None:
    server = faulty("relay-control-with-read")
    with server.client("full") as full, server.client("readonly") as readonly:
        point = full.get("/api/ws/v1/access-control-points").json()[0]["uuid"]
        assert readonly.get(f"/api/ws/v1/access-control-points/trigger/{point}").status_code == 200


def test_cross_system_read(faulty) -> None:
    server = faulty("cross-system-read")
    with server.client("full") as mine, server.client("other_system") as other:
        uuid = mine.post(DEPTS, json={"name": "Sales"}).json()["uuid"]
        assert other.get(f"{DEPTS}/{uuid}").status_code == 200


def test_list_leaks_other_system(faulty) -> None:
    server = faulty("list-leaks-other-system")
    with server.client("full") as mine, server.client("other_system") as other:
        uuid = mine.post(DEPTS, json={"name": "Sales"}).json()["uuid"]
        assert uuid in {d["uuid"] for d in other.get(DEPTS).json()}


def test_encryption_ignored(faulty) -> None:
    server = faulty("encryption-ignored")
    with server.client("full") as full, server.client("encrypted") as encrypted:
        uuid = full.post(DEPTS, json={"name": "Sales"}).json()["uuid"]
        assert encrypted.get(f"{DEPTS}/{uuid}").json()["name"] == "Sales"


def test_localhost_not_enforced(faulty) -> None:
    server = faulty("localhost-not-enforced")
    with server.control() as control:
        control.put("/_reference/settings", json={"restrict_to_localhost": True}).raise_for_status()

    async def remote() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(server.server), client=("203.0.113.7", 1))
        async with httpx.AsyncClient(transport=transport, base_url="http://reference") as client:
            return await client.get(
                DEPTS, headers={"Authorization": server.profile["keys"]["full"]}
            )

    assert asyncio.run(remote()).status_code == 200


def _drain_reads(api: httpx.Client) -> int:
    """Number of 30-unit reads that succeed before the first refusal (at most 200)."""
    for count in range(200):
        if api.get(DEPTS).status_code != 200:
            return count
    return 200


def test_no_retry_after(faulty) -> None:
    with faulty("no-retry-after").client("rate_limit") as api:
        _drain_reads(api)
        refused = api.get(DEPTS)
    assert refused.status_code == 429 and "retry-after" not in refused.headers


def test_bucket_never_refills(faulty) -> None:
    server = faulty("bucket-never-refills")
    with server.client("rate_limit") as api, server.control() as control:
        _drain_reads(api)
        control.put("/_reference/clock", json={"advance_seconds": 120}).raise_for_status()
        assert api.get(DEPTS).status_code == 429


def test_bucket_too_large(faulty) -> None:
    with faulty("bucket-too-large").client("rate_limit") as api:
        assert _drain_reads(api) > 2000 // 30


def test_reads_free(faulty) -> None:
    with faulty("reads-free").client("rate_limit") as api:
        assert _drain_reads(api) == 200


def test_failed_auth_free(faulty) -> None:
    server = faulty("failed-auth-free")
    bogus = {"Authorization": secrets.token_hex(32)}
    codes = {httpx.get(f"{server.base_url}{DEPTS}", headers=bogus).status_code for _ in range(8)}
    assert codes == {401}


def test_department_name_unchecked(faulty) -> None:
    with faulty("department-name-unchecked").client() as api:
        assert api.post(DEPTS, json={"name": "D"}).status_code == 201


def test_duplicate_names_allowed(faulty) -> None:
    with faulty("duplicate-names-allowed").client() as api:
        assert api.post(DEPTS, json={"name": "Sales"}).status_code == 201
        assert api.post(DEPTS, json={"name": "Sales"}).status_code == 201


def test_department_delete_keeps_links(faulty) -> None:
    with faulty("department-delete-keeps-links").client() as api:
        dept = api.post(DEPTS, json={"name": "Sales"}).json()["uuid"]
        person = api.post("/api/ws/v1/persons", json={"firstName": "Ann", "department": dept})
        assert person.status_code == 201, person.text
        assert api.delete(f"{DEPTS}/{dept}").status_code == 200
        record = api.get(f"/api/ws/v1/persons/{person.json()['uuid']}").json()
    assert record["department"] == dept


def test_location_put_replaces(faulty) -> None:
    with faulty("location-put-replaces").client() as api:
        uuid = api.post(LOCATIONS, json={"name": "Depot", "type": "AREA", "city": "Durban"}).json()[
            "uuid"
        ]
        api.put(f"{LOCATIONS}/{uuid}", json={"suburb": "Berea"})
        assert api.get(f"{LOCATIONS}/{uuid}").json()["city"] is None


def test_admin_role_deletable(faulty) -> None:
    server = faulty("admin-role-deletable")
    with server.client() as api:
        body = api.delete(f"/api/ws/v1/roles/{server.profile['roles']['administrator']}").json()
    assert body["code"] == 200


def test_role_refusal_http_status(faulty) -> None:
    with faulty("role-refusal-http-status").client() as api:
        role = api.post("/api/ws/v1/roles", json={"name": "Guards"}).json()["uuid"]
        user = api.post("/api/ws/v1/users", json={"email": "guard@example.com", "role": role})
        assert user.status_code == 201, user.text
        assert api.delete(f"/api/ws/v1/roles/{role}").status_code == 412


def test_plates_keep_spaces(faulty) -> None:
    with faulty("plates-keep-spaces").client() as api:
        plates = [v["licensePlate"] for v in api.get("/api/ws/v1/vehicles").json()["entries"]]
    assert any(" " in plate for plate in plates)


def _trigger(server) -> tuple[str, list, list]:
    with server.client() as api, server.control() as control:
        point = api.get("/api/ws/v1/access-control-points").json()[0]["uuid"]
        assert api.get(f"/api/ws/v1/access-control-points/trigger/{point}").status_code == 200
        relays = [
            e
            for e in control.get("/_reference/hardware/relay-events").json()
            if e["point"] == point
        ]
        audit = [e for e in control.get("/_reference/audit").json() if e["target"] == point]
    return point, relays, audit


def test_trigger_no_audit(faulty) -> None:
    _, relays, audit = _trigger(faulty("trigger-no-audit"))
    assert len(relays) == 1 and audit == []


def test_trigger_fires_twice(faulty) -> None:
    _, relays, _ = _trigger(faulty("trigger-fires-twice"))
    assert len(relays) == 2
