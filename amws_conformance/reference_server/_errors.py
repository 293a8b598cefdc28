"""The error every layer raises, and the documented failure body it becomes."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any


class ApiError(Exception):
    """A failure answered with ``{code, reason}`` (422 adds ``errors``).

    ``detail`` must never contain a value taken from the request: the documents forbid
    echoing rejected input.
    """

    def __init__(
        self,
        status: int,
        detail: str = "",
        *,
        errors: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        phrase = (
            HTTPStatus(self.status).phrase if self.status in HTTPStatus._value2member_map_ else ""
        )
        reason = f"{self.status} - {phrase}" + (f" - {self.detail}" if self.detail else "")
        body: dict[str, Any] = {"code": self.status, "reason": reason}
        if self.errors is not None:
            body["errors"] = dict(self.errors)
        return body


def invalid_fields(errors: dict[str, str]) -> ApiError:
    """422 naming each offending field in the documented ``Invalid Fields`` form."""
    listed = ", ".join(f"@{name}: {message}" for name, message in errors.items())
    return ApiError(422, f"Invalid Fields: [{listed}]", errors=errors)


def not_found(what: str = "record") -> ApiError:
    return ApiError(404, f"no {what} with that identifier")


def conflict(detail: str) -> ApiError:
    return ApiError(409, detail)
