"""How a schemathesis case reaches the target through the harness client, for the contract
suite's per-operation tests and its chained workflows alike."""

from __future__ import annotations

from typing import Any

from schemathesis.core import NotSet

from amws_conformance import spec

_UUID = spec.uuid_pattern()


def own_path(case: Any, ledger: Any) -> str:
    """The path to send: a write aimed at a generated UUID goes to one no record has, so only
    records of this run are ever changed. The case itself is left as generated (schemathesis's
    stateful checks read its parameters as the ones it chose)."""
    path = case.formatted_path
    if case.method.upper() == "GET":
        return path
    for value in (case.path_parameters or {}).values():
        if isinstance(value, str) and _UUID.fullmatch(value) and not ledger.owns(value):
            path = path.replace(value, ledger.fresh_uuid())
    return path


def no_default_role(case: Any) -> None:
    """A role flagged default takes the flag from the system's own default role
    (ROLE-DEFAULT-FLAG): a change to a record the run did not create, and one its cleanup
    cannot undo (the default role refuses deletion, ROLE-DELETE-DEFAULT). Such bodies go out
    with the flag off; test_roles.py covers the flag and restores it."""
    operation_id = case.operation.definition.raw.get("operationId")
    body = given(case.body)
    flagged = isinstance(body, dict) and body.get("default") is True
    if flagged and operation_id in ("createRole", "updateRole"):
        body["default"] = False


def given(value: Any) -> Any:
    return None if isinstance(value, NotSet) else value


# Operations without an API key (signed links, the virtual reader) throttle per address or
# per device, and random data trips those throttles by design: their 429 is an answer the
# spec lists (LINK-429-PER-ADDRESS, READER-AUTH-FAILURE-THROTTLE), not a reason to wait.
_KEYLESS = frozenset(op.operation_id for op in spec.operations() if not op.keyed)


def send(case: Any, api: Any, ledger: Any) -> Any:
    query, body, case_headers = given(case.query), given(case.body), given(case.headers)
    kwargs: dict[str, Any] = {"params": dict(query or {}) or None}
    headers = {k: str(v) for k, v in (case_headers or {}).items()}
    if case.media_type == "multipart/form-data" and isinstance(body, dict):
        kwargs["files"] = {
            k: ("file", v if isinstance(v, bytes) else str(v).encode(), "application/octet-stream")
            for k, v in body.items()
        }
    elif body is not None and not isinstance(body, (bytes, str)):
        kwargs["json"] = body
    elif isinstance(body, (bytes, str)):
        kwargs["content"] = body if isinstance(body, bytes) else body.encode()
        headers.setdefault("content-type", case.media_type or "application/json")
    path = own_path(case, ledger)
    # The contract suite judges the answer with its own checks (suites/contract/_checks.py).
    sender = api.unchecked
    if case.operation.definition.raw.get("operationId") in _KEYLESS:
        sender = sender.unretried
    return sender.request(case.method, path, headers=headers or None, **kwargs)
