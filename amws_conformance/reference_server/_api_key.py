"""An API key as the server reads it from its record: who it is, what it may do, its bucket."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from amws_conformance.reference_server.rate_bucket import DOCUMENTED, BucketSize


@dataclass
class ApiKey:
    uuid: str
    name: str
    value: str
    system: str
    permissions: frozenset[str]
    enabled: bool
    encryption: dict[str, Any] | None = None
    bucket: BucketSize = DOCUMENTED

    @classmethod
    def from_record(cls, record: dict[str, Any], system: str) -> ApiKey:
        return cls(
            uuid=record["uuid"],
            name=record["name"],
            value=record["value"],
            system=system,
            permissions=frozenset(record["permissions"]),
            enabled=record["enabled"],
            encryption=record.get("encryption"),
            bucket=BucketSize(**record.get("bucket", DOCUMENTED.__dict__)),
        )
