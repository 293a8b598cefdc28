"""The demo deployment a fresh reference server provisions, and the profile that describes it.

Everything a real system gets from its admin screens (systems, API keys and their ticked
permissions, roles, access control points and lists, vehicles) is created here once; a
file-backed database keeps it, and every record, across restarts.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import yaml

from amws_conformance import spec
from amws_conformance.reference_server._state import Server
from amws_conformance.reference_server.domain.vehicles import store_vehicle
from amws_conformance.reference_server.rate_bucket import DOCUMENTED, RAISED

ALWAYS = {"schedule": "always"}

MORE_LISTS = 48  # beyond the three named lists of each system


def _permissions() -> tuple[frozenset[str], frozenset[str]]:
    """Every permission name of the spec, and the read-only subset."""
    every = frozenset(op.permission for op in spec.operations() if op.permission)
    reads = frozenset(p for p in every if p.startswith("Read ") or p.endswith("- Read"))
    return every, reads


def _key(server: Server, system: str, name: str, permissions: frozenset[str], **extra: Any) -> None:
    record = {
        "name": name,
        "value": secrets.token_hex(32),  # 64 characters: the shortest valid header value
        "permissions": sorted(permissions),
        "enabled": extra.pop("enabled", True),
        "bucket": extra.pop("bucket", RAISED).__dict__,
        **extra,
    }
    server.store.insert("apikey", system, record, unique={"value": record["value"]})


def _vehicles(server: Server, system: str, count: int) -> None:
    makes = [("Toyota", "Corolla"), ("Volkswagen", "Polo"), ("Ford", "Ranger"), ("BMW", "X3")]
    for i in range(count):
        make, model = makes[i % len(makes)]
        store_vehicle(
            server,
            system,
            {
                "licensePlate": f"CA {100 + i}-{i % 10}{(i * 7) % 10}",
                "vin": f"1HG-CM82 633A{i:06d}",
                "make": make,
                "model": model,
                "color": ["white", "silver", "blue"][i % 3],
                "plateCountry": "ZA",
                "plateRegion": "WC",
                "plateCategory": "private",
            },
        )


def provision(server: Server) -> None:
    """Create the demo deployment unless the database already holds one."""
    if server.store.meta("provisioned"):
        return
    every, reads = _permissions()
    with server.store.transaction():
        systems = [secrets.token_hex(8), secrets.token_hex(8)]
        server.store.set_meta("systems", json.dumps(systems))
        main, other = systems
        _key(server, main, "full", every)
        _key(server, main, "readonly", reads)
        _key(server, main, "none", frozenset())
        _key(server, main, "disabled", every, enabled=False)
        _key(server, main, "rate_limit", every, bucket=DOCUMENTED)
        _key(
            server,
            main,
            "encrypted",
            every,
            # An override list (doc1 § Authentication item 8) that also covers names, so the
            # encryption is observable on every resource, reference data included.
            encryption={
                "secret": secrets.token_hex(32),
                "iv": secrets.token_hex(16),
                "fields": ["name", "email", "mobile", "firstName"],
            },
        )
        _key(server, other, "other_system", every)
        for system in systems:
            roles = server.store
            roles.insert(
                "role",
                system,
                {"name": "Administrator", "default": False, "_administrator": True},
                unique={"name": "Administrator"},
            )
            roles.insert(
                "role",
                system,
                {"name": "Receptionist", "default": False},
                unique={"name": "Receptionist"},
            )
            roles.insert("role", system, {"name": "Host", "default": True}, unique={"name": "Host"})
            points = {}
            for name, kind in (
                ("Main entrance", "DOOR"),
                ("Lobby turnstile", "TURNSTILE"),
                ("Car park gate", "VEHICLE_GATE"),
                ("Lift bank A", "ELEVATOR"),
                ("Loading portal", "PORTAL"),
                ("Security desk", "CHECK_POINT"),
            ):
                points[kind] = server.store.insert(
                    "access_point", system, {"name": name, "type": kind}
                )
            server.store.insert(
                "acl",
                system,
                {
                    "name": "All hours - main entrance",
                    "_rules": [{"point": points["DOOR"], **ALWAYS}],
                },
            )
            server.store.insert(
                "acl",
                system,
                {
                    "name": "All hours - vehicles",
                    "_rules": [{"point": points["VEHICLE_GATE"], **ALWAYS}],
                },
            )
            server.store.insert(
                "acl",
                system,
                {
                    "name": "All hours - lobby",
                    "_rules": [
                        {"point": points["TURNSTILE"], **ALWAYS},
                        {"point": points["ELEVATOR"], **ALWAYS},
                    ],
                },
            )
            # One list per floor, so the system holds more lists than one credential may carry
            # (50): the limit can then be tested with lists that all exist.
            for floor in range(1, MORE_LISTS + 1):
                server.store.insert(
                    "acl",
                    system,
                    {
                        "name": f"Floor {floor} - lift bank A",
                        "_rules": [{"point": points["ELEVATOR"], **ALWAYS}],
                    },
                )
        _vehicles(server, main, 150)
        _vehicles(server, other, 3)
        server.store.set_meta("link_secret", secrets.token_hex(32))
        server.store.set_meta("provisioned", "1")
    for hook in server.provisioners:
        hook(server)


def _keys_of(server: Server, system: str) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in server.store.all("apikey", system)}


# The key classes a pool may be served for (the encrypted key's secrets are its own: never a
# pool), and the system each class's keys belong to (0: the main one, 1: the other).
POOLED = {"full": 0, "readonly": 0, "none": 0, "disabled": 0, "rate_limit": 0, "other_system": 1}


def _member(key_class: str, index: int) -> str:
    """The stored name of a pool's ``index``-th key (the first keeps the class's name)."""
    return key_class if index == 0 else f"{key_class}-{index + 1}"


def provision_pools(server: Server, pools: dict[str, int]) -> None:
    """Give each class the keys ``pools`` asks for, alike in everything but their value (an
    administrator making more keys with the same ticks); keys a database already holds stay."""
    systems = server.systems()
    with server.store.transaction():
        for key_class, size in pools.items():
            system = systems[POOLED[key_class]]
            held = _keys_of(server, system)
            first = held[key_class]
            for index in range(1, size):
                if _member(key_class, index) in held:
                    continue
                record = {k: v for k, v in first.items() if k not in ("uuid", "value", "name")}
                record |= {"name": _member(key_class, index), "value": secrets.token_hex(32)}
                server.store.insert("apikey", system, record, unique={"value": record["value"]})
    server.pools = dict(pools)


def _pool_values(keys: dict[str, dict[str, Any]], key_class: str, size: int) -> Any:
    """The profile's value of a class: its key, or a pool's keys as a list."""
    values = [keys[_member(key_class, i)]["value"] for i in range(size)]
    return values[0] if size == 1 else values


# The profile's throttles fields, by the x-throttles name of what each declares.
PROFILE_THROTTLES = {
    "reader_failures": "reader-auth-failures-per-address",
    "reader_device": "reader-per-device",
    "signed_links": "signed-link-per-address",
}


def profile(server: Server, base_url: str) -> dict[str, Any]:
    """The target profile of the demo deployment, in the architecture page's format."""
    main, other = server.systems()
    keys = _keys_of(server, main)
    other_keys = _keys_of(server, other)
    encrypted = keys["encrypted"]
    roles = {
        (
            "administrator"
            if r.get("_administrator")
            else "default"
            if r["default"]
            else "ordinary"
        ): r["uuid"]
        for r in server.store.all("role", main)
    }
    per_key = {}
    for name, record in {**keys, "other_system": other_keys["other_system"]}.items():
        if name not in POOLED and name != "encrypted":
            continue  # a pool's further keys: the same bucket as its first
        bucket = server.key_bucket(record)
        if bucket != DOCUMENTED:
            per_key[name] = dict(bucket.__dict__)
    document: dict[str, Any] = {
        "name": "amws-reference",
        "base_url": base_url,
        "keys": {
            **{
                n: _pool_values((keys, other_keys)[system], n, server.pools.get(n, 1))
                for n, system in POOLED.items()
            },
            "encrypted": {
                "key": encrypted["value"],
                "secret": encrypted["encryption"]["secret"],
                "iv": encrypted["encryption"]["iv"],
                "fields": list(encrypted["encryption"]["fields"]),
            },
        },
        "roles": roles,
        "control": {"url": f"{base_url}/_reference", "token": server.control_token},
        "allow": {"physical": True},
        "rate_limits": {
            "default": DOCUMENTED.__dict__,
            "per_key": per_key,
            "unauthenticated": server.unauthenticated_bucket.__dict__,
        },
        # The allowances this deployment's throttles enforce (figures the documents leave
        # open): the throttle rules are judged against them.
        "throttles": {
            field: {"requests": t.requests, "window_seconds": t.window_seconds}
            for field, name in PROFILE_THROTTLES.items()
            for t in [server.throttle(name)]
        },
    }
    for extend in server.profile_extenders:
        extend(server, document)
    return document


class _PlainDumper(yaml.SafeDumper):
    """Writes repeated values out in full: a profile is read by people, not only parsers."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def write_profile(server: Server, base_url: str, path: str) -> None:
    """Write the profile atomically (a reader never sees half a file)."""
    import os
    import tempfile

    text = yaml.dump(profile(server, base_url), Dumper=_PlainDumper, sort_keys=False)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".profile-", suffix=".yaml")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
