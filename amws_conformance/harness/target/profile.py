"""Target profiles: YAML with ``${ENV}`` values, checked against ``profile.schema.json``.

A profile that does not load or does not validate raises :class:`ProfileError`, whose message
is one line naming the field, so the run stops before any test with an answer a person can act on.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from amws_conformance import spec

_SCHEMA = json.loads(
    (Path(__file__).parents[1].joinpath("profile.schema.json")).read_text(encoding="utf-8")
)
# A key is an Authorization header value: its length limits are the spec's, stated once there.
_SCHEMA["$defs"]["key"].update(
    zip(("minLength", "maxLength"), spec.key_header_length(), strict=True)
)
# The keys a profile may name, in the schema's order: the one list of them.
KEY_NAMES: tuple[str, ...] = tuple(_SCHEMA["properties"]["keys"]["properties"])
_API_ROOT = "/api/ws/v1"
# What an Authorization header value may hold: visible ASCII and inner spaces.
_HEADER_TEXT = re.compile(r"[\x20-\x7e]*")
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
DOCUMENTED_BUCKET = {
    "capacity": spec.rate_limit().capacity,
    "refill_per_minute": spec.rate_limit().refill_per_minute,
}
# Profile values that are addresses, names or identifiers rather than secrets.
_PUBLIC_FIELDS = frozenset(
    {
        "name",
        "base_url",
        "url",
        "listen",
        "public_url",
        "uuid",
        "access_control_point",
        "access_control_list",
        "administrator",
        "default",
        "ordinary",
        "fields",
    }
)


# What stands in for a secret wherever the run writes text or a profile out.
REDACTED = "[redacted]"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret cut out, the longest first (one may hold another), each also
    as written trimmed and as a bytes repr quotes it (an HTTP library's error may quote a
    header it refused, escapes and all)."""
    for secret in sorted(secrets, key=len, reverse=True):
        for form in {secret, secret.strip(), repr(secret.encode())[2:-1]} - {""}:
            text = text.replace(form, REDACTED)
    return text


class ProfileError(Exception):
    """The profile cannot be used; ``str(error)`` is one line naming the field."""


@dataclass(frozen=True)
class Profile:
    """A validated target profile."""

    # Out of the repr: pytest prints a failing test's arguments, and a profile holds the keys.
    data: dict[str, Any] = field(repr=False)
    source: str = "<embedded>"
    _keys: dict[str, str] = field(default_factory=dict, repr=False)

    # The profile schema makes these strings (validate() checked the data against it).
    @property
    def name(self) -> str:
        name: str = self.data["name"]
        return name

    @property
    def base_url(self) -> str:
        url: str = self.data["base_url"]
        return url.rstrip("/")

    def key(self, name: str) -> str | None:
        """The API key value configured under ``keys.<name>`` (``encrypted`` gives its key; a
        pool its first key, the one a test that needs one key's identity uses)."""
        pool = self.pool(name)
        return pool[0] if pool else None

    def pool(self, name: str) -> tuple[str, ...]:
        """Every key value configured under ``keys.<name>``: one, or a pool's, in its order."""
        value = self.data["keys"].get(name)
        if value is None:
            return ()
        return tuple(_key_value(v) for v in (value if isinstance(value, list) else [value]))

    def has_key(self, name: str) -> bool:
        return self.key(name) is not None

    def section(self, name: str) -> dict[str, Any] | None:
        return self.data.get(name)

    def bucket(self, key_name: str) -> dict[str, int]:
        """What the target enforces for this key (the documented bucket unless overridden)."""
        limits = self.data.get("rate_limits") or {}
        per_key = (limits.get("per_key") or {}).get(key_name)
        return per_key or limits.get("default") or DOCUMENTED_BUCKET

    def unauthenticated_bucket(self) -> dict[str, int]:
        limits = self.data.get("rate_limits") or {}
        return limits.get("unauthenticated") or limits.get("default") or DOCUMENTED_BUCKET

    def throttle(self, name: str) -> spec.Throttle | None:
        """The allowance the profile declares under ``throttles.<name>`` (``reader_failures``,
        ``reader_device``, ``signed_links``), else None: the documents give no figure, so a
        test judges a throttle against a declared one only."""
        declared = (self.data.get("throttles") or {}).get(name)
        if declared is None:
            return None
        return spec.Throttle(
            requests=declared["requests"], window_seconds=float(declared.get("window_seconds", 60))
        )

    @property
    def media_link_fields(self) -> tuple[str, ...] | None:
        """The read fields the profile says carry signed media links (None: not said)."""
        fields = (self.data.get("media_links") or {}).get("fields")
        return None if fields is None else tuple(fields)

    @property
    def physical_allowed(self) -> bool:
        return bool((self.data.get("allow") or {}).get("physical", False))

    def secrets(self) -> list[str]:
        """Every secret value in the profile, for redacting transcripts."""
        found: list[str] = []

        def walk(node: Any, key: str = "") -> None:
            if isinstance(node, dict):
                for k, v in node.items():
                    walk(v, k)
            elif isinstance(node, list):
                for item in node:
                    walk(item, key)
            elif isinstance(node, str) and key not in _PUBLIC_FIELDS and len(node) >= 8:
                found.append(node)

        walk(self.data)
        return found


def _key_value(value: Any) -> str:
    """The Authorization header value of one configured key (``encrypted`` is a mapping)."""
    found: str = value["key"] if isinstance(value, dict) else value
    return found


def key_fields(keys: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Each configured key as (profile field, value): ``keys.full``, or ``keys.full[1]`` for
    the second key of a pool."""
    for name, value in keys.items():
        if isinstance(value, list):
            for index, item in enumerate(value):
                yield f"keys.{name}[{index}]", _key_value(item)
        else:
            yield f"keys.{name}", _key_value(value)


def _interpolate(node: Any, where: str) -> Any:
    if isinstance(node, dict):
        return {k: _interpolate(v, f"{where}.{k}" if where else str(k)) for k, v in node.items()}
    if isinstance(node, list):
        return [_interpolate(v, f"{where}[{i}]") for i, v in enumerate(node)]
    if isinstance(node, str):

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in os.environ:
                raise ProfileError(f"profile field {where}: environment variable {name} is not set")
            return os.environ[name]

        return _ENV.sub(replace, node)
    return node


def _field_of(error: jsonschema.ValidationError) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    path = path.removeprefix(".")
    if error.validator == "required":
        missing = error.message.split("'")[1]
        path = f"{path}.{missing}" if path else missing
    if error.validator == "additionalProperties":
        extra = re.findall(r"'([^']+)'", error.message)
        name = extra[0] if extra else "?"
        return f"{path}.{name}" if path else name
    return path or "(top level)"


def _reason(error: jsonschema.ValidationError) -> str:
    value = error.validator_value
    reasons: dict[str, Callable[[], str]] = {
        "required": lambda: "is required",
        "additionalProperties": lambda: "is not a known profile field",
        "pattern": lambda: "has the wrong format",
        "type": lambda: f"must be of type {value}",
        "minLength": lambda: f"is too short (at least {value} characters)",
        "maxLength": lambda: f"is too long (at most {value} characters)",
        "minimum": lambda: f"must be at least {value}",
        "enum": lambda: (
            "is not one of " + ", ".join(map(str, value if isinstance(value, list) else []))
        ),
        "propertyNames": lambda: "names an unknown key",
        # The one oneOf of the schema: a key class holds one key or a pool of them.
        "oneOf": lambda: "must be one key or a list of at least one key",
        "minItems": lambda: "is an empty list",
    }
    return reasons.get(str(error.validator), lambda: "is not valid")()


def validate(data: Any, source: str = "<profile>") -> Profile:
    """Interpolate and validate a parsed profile."""
    if not isinstance(data, dict):
        raise ProfileError(f"{source}: a profile is a YAML mapping")
    data = _interpolate(data, "")
    validator = jsonschema.Draft202012Validator(_SCHEMA)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        raise ProfileError(f"{source}: profile field {_field_of(error)} {_reason(error)}")
    seen: dict[str, str] = {}
    for where, key in key_fields(data["keys"]):
        if key != key.strip():
            # An HTTP header cannot carry it (the client would refuse, quoting the value).
            raise ProfileError(
                f"{source}: profile field {where} has white space at its start or end "
                "(the value is not shown)"
            )
        if not _HEADER_TEXT.fullmatch(key):
            raise ProfileError(
                f"{source}: profile field {where} holds a character an HTTP header cannot "
                "carry (a line break or another control character; the value is not shown)"
            )
        if key in seen and where.split("[")[0] == seen[key].split("[")[0]:
            # One key twice in a pool would pace one bucket as two: 429s the run did not plan.
            raise ProfileError(
                f"{source}: profile field {where} repeats {seen[key]} (a pool's keys are "
                "different keys; the value is not shown)"
            )
        seen.setdefault(key, where)
    if data["base_url"].rstrip("/").endswith(_API_ROOT):
        raise ProfileError(
            f"{source}: profile field base_url ends in {_API_ROOT}; give everything before it"
        )
    return Profile(data=data, source=source)


def load(path: str | os.PathLike[str]) -> Profile:
    """Read, interpolate and validate a profile file."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"{source}: cannot read the profile ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ProfileError(f"{source}: the profile is not valid YAML{where}") from None
    return validate(data, source)
