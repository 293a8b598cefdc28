"""The decisions of the request pipeline (``app.py``): who is served, what it costs, what runs.

The pipeline asks ``server.policy(RequestPolicy)`` for these decisions and holds no others;
the faults of addresses, keys, permissions, rate charges, path checks and body reading bend
them by overriding (``reference_server/_policy.py`` describes how). Each method returns what
the documents require.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from amws_conformance import spec
from amws_conformance.reference_server._errors import ApiError, invalid_fields
from amws_conformance.reference_server._policy import Policy

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._api_key import ApiKey

FAILED_AUTH_COST = spec.rate_limit().failed_authentication_cost  # no operation carries it


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class RequestPolicy(Policy):
    """The decisions of the steps every request goes through before and after its handler.

    One method per decision, named after what it decides; faults bend them by overriding.
    """

    # Before routing.
    def client_admitted(self, client: str) -> bool:
        """Whether the client address is served: any, or loopback only when the admin says so."""
        return not self.server.setting("restrict_to_localhost") or _is_loopback(client)

    def routed_path(self, path: str) -> str:
        """The path a request is routed by: its own."""
        return path

    def answered_before_routing(self, request: Request) -> Response | None:
        """The answer to a request that never reaches the routes: none, every request does."""
        return None

    def path_checked_first(self) -> bool:
        """Whether path values are checked before the API key: no, the key comes first."""
        return False

    # Authentication.
    def keyless_header(self, header: str | None) -> None:
        """What a keyless operation does with an Authorization header: nothing."""

    def header(self, request: Request) -> str | None:
        """The Authorization value a keyed request presents: its header's."""
        return request.headers.get("authorization")

    def key_value(self, header: str) -> str:
        """The API key a header names: the header less an optional ``Bearer`` prefix."""
        return header.removeprefix("Bearer ")

    def key_for(self, value: str) -> ApiKey | None:
        """The API key a value authenticates as: the one it equals."""
        return self.server.key_by_value(value)

    def authenticates(self, key: ApiKey) -> bool:
        """Whether a known key authenticates: only while it is enabled."""
        return key.enabled

    # Rate charges.
    def cost(self, op: spec.Operation) -> int:
        """The units a request of ``op`` draws: the operation's documented cost."""
        return int(op.rate_cost or 0)

    def retry_after(self, wait: int) -> dict[str, str]:
        """The headers of a 429 whose bucket refills enough in ``wait`` seconds."""
        return {"Retry-After": str(wait)}

    def charge(self, bucket: str, units: int) -> None:
        """Take ``units`` from ``bucket``, or refuse with 429 while it holds too few."""
        wait = self.server.buckets.charge(bucket, units)
        if wait is not None:
            raise ApiError(429, "rate limit exhausted", headers=self.retry_after(wait))

    def charge_key(self, key: ApiKey, units: int) -> None:
        """Charge a request of ``key``: from the key's own bucket."""
        self.charge(key.uuid, units)

    def charge_failed_authentication(self, bucket: str) -> None:
        """Charge a failed authentication: the documented cost, from ``bucket``."""
        self.charge(bucket, FAILED_AUTH_COST)

    # Permission.
    def permitted(self, key: ApiKey, op: spec.Operation) -> bool:
        """Whether ``key`` may call ``op``: it holds the operation's permission."""
        return op.permission in key.permissions

    def carries_out_refused(self, error: ApiError, key: ApiKey, op: spec.Operation) -> bool:
        """Whether a request refused once its key is known runs all the same: never."""
        return False

    def refused_answer(self, refusal: ApiError, request: Request, response: Response) -> Response:
        """The answer to a refused request that ran all the same: its refusal, as any other."""
        raise refusal

    # Path values.
    def empty_segment_missing(self) -> bool:
        """Whether an empty path segment is a missing parameter (400), not a malformed one."""
        return True

    def malformed_path(self, errors: dict[str, str]) -> ApiError:
        """The refusal of path values of the wrong format: 422 naming each."""
        return invalid_fields(errors)

    # What the handler is asked.
    def body_refused(self, raw: bytes, body: Any, error: ApiError) -> Any:
        """The body a handler gets once validation refused it: none, the refusal stands."""
        raise error

    def paging_asked(self, asked: dict[str, Any]) -> dict[str, Any]:
        """The query or body a handler is asked with: paging as the request gave it."""
        return asked

    def addressed(self, op: spec.Operation, path: dict[str, str], body: Any) -> dict[str, str]:
        """The path values naming the record an operation acts on: the path's own."""
        return path

    # The answer.
    def answered(self, response: Response, request: Request, key: ApiKey | None) -> Response:
        """A handler's answer as it leaves the pipeline: unchanged, it holds no session."""
        return response
