"""The HTTP client tests use: one per key, paced, guarded, checked and recorded.

Every exchange goes through :meth:`TargetClient.request`, which (in order) refuses to change a
record the run did not create, waits for the modelled bucket, encrypts listed fields for an
encrypting key, sends, honours ``Retry-After`` with doubling, decrypts, applies the global checks,
registers created records in the ledger, and keeps a redacted transcript for the report.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from amws_conformance import spec
from amws_conformance.harness._checks import RuleViolation, Violation, check, normative
from amws_conformance.harness.evidence.curl import command as curl_command
from amws_conformance.harness.lifecycle.ledger import Ledger, delete_path_for, ends_record
from amws_conformance.harness.plan.spend import FAILED_AUTH_COST, SETUP, Spend, answered_cost
from amws_conformance.harness.target.crypto import decrypt_text, encrypt_text
from amws_conformance.harness.target.health import Health, TargetUnreachable
from amws_conformance.harness.target.health import send as send_within
from amws_conformance.harness.target.pacing import Pacer
from amws_conformance.harness.target.pool import KeyPool, PoolKey
from amws_conformance.harness.target.profile import redact

_UUID = spec.uuid_pattern()
MAX_429_RETRIES = 4


class SafetyError(AssertionError):
    """The suite was about to change a record it did not create."""


@dataclass
class Exchange:
    """One request and its answer, kept for failure evidence."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: Any
    status: int
    response_headers: dict[str, str]
    response_body: str
    curl: str = ""  # the request as a curl command, secrets as variables (harness/evidence/curl.py)


@dataclass
class Session:
    """What all clients of one run share."""

    base_url: str
    ledger: Ledger
    secrets: list[str] = field(repr=False)  # never in a failure's printed arguments
    # Each secret and the shell variable a curl command writes in its place.
    variables: dict[str, str] = field(default_factory=dict, repr=False)
    violations: list[tuple[str, Violation]] = field(default_factory=list)
    transcript: list[Exchange] = field(default_factory=list)
    current_test: str = ""
    coverage: Counter[str] = field(default_factory=Counter)
    # The operations of the current test whose shape the documents leave open (x-assumed).
    assumed_operations: set[str] = field(default_factory=set)
    # The same, per shared set-up: a test that uses the set-up relies on them as well.
    setup_assumed: dict[str, set[str]] = field(default_factory=dict)
    # False while tests and fixtures are torn down, or the run cleans up: tidying, not observing.
    observing: bool = True
    # True while the current test needs one key's identity per class (its marks say so): each
    # pool then sends everything with its first key (harness/target/pool.py).
    pinned: bool = False
    spend: Spend = field(default_factory=Spend)
    health: Health = field(default_factory=Health)
    # Called before each request of a test (not of the cleanup): raises to end the test when
    # the run's deadline leaves no more time than the cleanup needs.
    before_request: Callable[[], None] | None = None
    # Holds an interrupt back from a create's send until its record is in the ledger.
    shield: Callable[[], AbstractContextManager[None]] = nullcontext

    @property
    def booking(self) -> str:
        """Whom what is spent now is booked to: a shared set-up, the preflight, or the test."""
        return self.spend.current or self.current_test

    def redact(self, text: str) -> str:
        return redact(text, self.secrets)


def _encode_fields(node: Any, fields: frozenset[str], convert: Callable[[str], str]) -> Any:
    if isinstance(node, dict):
        return {
            k: convert(v)
            if k in fields and isinstance(v, str)
            else _encode_fields(v, fields, convert)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_encode_fields(v, fields, convert) for v in node]
    return node


def _is_read(op: spec.Operation) -> bool:
    """A keyed operation a Read permission allows (list, read, search, match, download)."""
    permission = str(op.permission or "")
    return op.keyed and (permission.startswith("Read ") or permission.endswith("- Read"))


class TargetClient:
    """Talks to the target with one way of authenticating (a key, or a deliberate bad header)."""

    def __init__(
        self,
        session: Session,
        name: str,
        keys: KeyPool,
        *,
        failing: bool = False,
        encryption: dict[str, Any] | None = None,
        timeout: float = 30.0,
        bucket: str | None = None,
    ) -> None:
        self.session = session
        self.name = name
        self.keys = keys  # one key, or a pool: each request goes with the one it picks
        self.bucket = bucket or name  # where the target charges this client's requests
        # Where this client's reads go instead (the readonly key: its own bucket drains beside
        # this one's); None: it sends them itself.
        self.reads_via: TargetClient | None = None
        self.failing = failing
        self.encryption = encryption
        self._http = httpx.Client(base_url=session.base_url, timeout=timeout)

    @property
    def header(self) -> str | None:
        """The Authorization value of the class's first key (a test naming one key uses it)."""
        return self.keys.first.header

    @property
    def pacer(self) -> Pacer | None:
        """The first key's pacer: what a request sent with :attr:`header` is paced on."""
        return self.keys.first.pacer

    def close(self) -> None:
        self._http.close()

    @contextmanager
    def only(self, key: PoolKey) -> Iterator[TargetClient]:
        """This client with ``key`` alone (the preflight tries each key of a pool)."""
        alone = TargetClient(
            self.session,
            self.name,
            KeyPool([key]),
            failing=self.failing,
            encryption=self.encryption,
            bucket=self.bucket,
        )
        try:
            yield alone
        finally:
            alone.close()

    # -- shortcuts --------------------------------------------------------------------
    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)

    # -- the one way out ----------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        content: bytes | None = None,
        files: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        checks: bool = True,
        pace: bool = True,
        retry_429: bool = True,
        raw: bool = False,
        allow_foreign: bool = False,
    ) -> httpx.Response:
        """Send one request. ``raw`` skips field encryption; ``checks`` the global checks."""
        found = spec.match(method, urlsplit(path).path)
        op, path_params = found if found else (None, {})
        # A header given names its own key: that request is not rerouted.
        routed = "Authorization" not in (headers or {}) and op is not None and _is_read(op)
        if self.reads_via is not None and routed:
            return self.reads_via.request(
                method,
                path,
                json=json,
                content=content,
                files=files,
                params=params,
                headers=headers,
                checks=checks,
                pace=pace,
                retry_429=retry_429,
                raw=raw,
                allow_foreign=allow_foreign,
            )
        if method.upper() in ("PUT", "DELETE", "POST") and not allow_foreign:
            self._guard(method, path, op)
        send_json = json
        if self.encryption and not raw and json is not None:
            send_json = _encode_fields(json, self._fields(), self._encrypt)
        # A header given names its own key: paced as the first key, the one tests name.
        named = "Authorization" in (headers or {})
        wait, attempts = 1.0, 0
        creates = op is not None and op.creates
        with ExitStack() as held:
            while True:
                if self.session.observing and self.session.before_request is not None:
                    self.session.before_request()
                all_headers = dict(headers or {})
                key: PoolKey | None = None
                if op is not None and op.keyed:
                    cost = FAILED_AUTH_COST if self.failing else int(op.rate_cost or 0)
                    key = self.keys.take(cost if pace else None, pinned=named)
                    if key.header is not None:
                        all_headers.setdefault("Authorization", key.header)
                request = self._http.build_request(
                    method,
                    path,
                    json=send_json,
                    content=content,
                    files=files,
                    params=params,
                    headers=all_headers,
                )
                if creates:  # from the send until the ledger has the record (see shield)
                    held.enter_context(self.session.shield())
                response = self._send(request)
                self._book(op, response, retry_429, key)
                if response.status_code != 429 or not retry_429 or attempts >= MAX_429_RETRIES:
                    break
                held.close()  # refused: nothing was made, an interrupt held back may stop now
                # Retry-After is a lower bound (buckets are per node); double on each 429.
                if key is not None and key.pacer is not None:
                    key.pacer.drained()
                advised = response.headers.get("retry-after", "")
                wait = max(
                    wait * 2 if attempts else 0, float(advised) if advised.isdigit() else wait
                )
                time.sleep(wait)
                attempts += 1
            if self.encryption and not raw:
                response = self._decrypted(response)
            self._record(method, response, json)
            if op is not None:
                self.session.coverage[op.operation_id] += 1
                if self.session.observing:
                    self.session.spend.called(self.session.booking, op.operation_id)
                if op.assumed and self.session.observing:
                    booking = self.session.booking
                    if booking.startswith(SETUP):
                        self.session.setup_assumed.setdefault(booking, set()).add(op.operation_id)
                    else:
                        self.session.assumed_operations.add(op.operation_id)
                # The ledger first: a record made by an answer that breaks a check is still
                # the run's to remove.
                self._register(op, path_params, response, json, urlsplit(path).path)
        if op is not None and checks:
            self._check(op, json, response, params)
        return response

    # -- steps ------------------------------------------------------------------------
    def _send(self, request: httpx.Request) -> httpx.Response:
        """Send within the run's per-request deadline, telling the run's health whether the
        target answered."""
        health = self.session.health
        # Only the target's own address speaks for its health: a link it handed out may point
        # elsewhere, and that host not answering says nothing of the target.
        own = request.url.netloc == httpx.URL(self.session.base_url).netloc
        try:
            response = send_within(self._http, request, health.request_seconds)
        except httpx.TransportError as error:
            if own:
                health.unanswered(error)
            if isinstance(error, TargetUnreachable):
                raise
            raise TargetUnreachable(str(error) or type(error).__name__, request=request) from error
        if own:
            health.answered()
        return response

    def _book(
        self,
        op: spec.Operation | None,
        response: httpx.Response,
        retry_429: bool,
        key: PoolKey | None = None,
    ) -> None:
        spend, test = self.session.spend, self.session.booking
        try:
            elapsed = response.elapsed.total_seconds()
        except RuntimeError:  # an answer made up in a test, never sent
            elapsed = 0.0
        status = response.status_code
        if op is None or not op.keyed:
            spend.book(test, self.bucket, 0, elapsed)  # keyless: throttled, no key's bucket
            return
        # A failing client's units are the failed-authentication bucket's, whichever key.
        paid_by = key.label if key is not None and not self.failing else ""
        spend.book(test, self.bucket, answered_cost(op, status), elapsed, paid_by)
        if status == 429 and retry_429:
            request = response.request
            spend.refused(test, paid_by or self.bucket, f"{request.method} {request.url.path}")

    def _guard(self, method: str, path: str, op: spec.Operation | None) -> None:
        if op is None or not op.keyed:
            return
        if op.method == "POST" and not _UUID.search(path):
            return
        for value in _UUID.findall(urlsplit(path).path):
            if not self.session.ledger.owns(value):
                raise SafetyError(f"refusing {method} {path}: {value} was not created by this run")

    def _fields(self) -> frozenset[str]:
        assert self.encryption is not None
        return frozenset(
            self.encryption.get("fields") or spec.openapi()["x-default-encrypted-fields"]
        )

    def _encrypt(self, text: str) -> str:
        assert self.encryption is not None
        return encrypt_text(text, self.encryption["secret"], self.encryption["iv"])

    def _decrypted(self, response: httpx.Response) -> httpx.Response:
        assert self.encryption is not None
        try:
            body = json.loads(response.content)
        except ValueError:
            return response
        secret, iv = self.encryption["secret"], self.encryption["iv"]

        def convert(text: str) -> str:
            try:
                return decrypt_text(text, secret, iv)
            except ValueError:
                return text

        plain = _encode_fields(body, self._fields(), convert)
        return httpx.Response(
            response.status_code,
            headers=[(k, v) for k, v in response.headers.items() if k.lower() != "content-length"],
            content=json.dumps(plain).encode(),
            request=response.request,
        )

    def _check(
        self, op: spec.Operation, body: Any, response: httpx.Response, query: dict[str, Any] | None
    ) -> None:
        violations = check(op, body, response, query)
        for violation in violations:
            self.session.violations.append((self.session.current_test, violation))
        # A breach of an assumed rule is recorded against that rule (its verdict, informative)
        # but does not fail the test at hand, which may decide normative rules.
        violations = [v for v in violations if normative(v.rule)]
        if violations:
            raise RuleViolation(
                "global checks failed for "
                f"{response.request.method} {response.request.url.path} -> {response.status_code}: "
                + "; ".join(str(v) for v in violations),
                sorted({v.rule for v in violations}),
            )

    def _register(
        self,
        op: spec.Operation,
        params: dict[str, str],
        response: httpx.Response,
        body: Any,
        path: str,
    ) -> None:
        """Keep the ledger true: what a create made, what a delete or a claim removed."""
        ledger = self.session.ledger
        if response.status_code not in (200, 201, 204):
            return
        try:
            answer = response.json() if response.content else None
        except ValueError:
            answer = None
        refused = isinstance(answer, dict) and answer.get("code") not in (None, 200, 201)
        if op.method == "DELETE" and refused:
            return  # an HTTP 200 carrying a refusal in its body (role delete): nothing changed
        if op.method == "DELETE" or ends_record(op.operation_id, body):
            ledger.deleted(path)
            return
        photo = body.get("photoUuid") if isinstance(body, dict) else None
        if isinstance(photo, str) and ledger.owns(photo):
            ledger.forget(photo)  # a claimed staged file is no longer a staged file
        if op.method != "POST" or not isinstance(answer, dict):
            return
        new = answer.get("registrationId") or answer.get("uuid")
        # Any success of a create makes a record the run must remove, also one that answers 200
        # where the documents say 201 (that deviation is the checks' to judge, not the ledger's).
        if op.creates and isinstance(new, str) and _UUID.fullmatch(new):
            ledger.register(
                new,
                delete_path_for(op, params, new),
                self.name,
                op.operation_id,
                self.session.booking,
            )

    def _record(self, method: str, response: httpx.Response, body: Any) -> None:
        redact = self.session.redact
        self.session.transcript.append(
            Exchange(
                method=method,
                url=str(response.request.url),
                request_headers={k: redact(v) for k, v in response.request.headers.items()},
                request_body=json.loads(redact(json.dumps(body))) if body is not None else None,
                status=response.status_code,
                response_headers=dict(response.headers),
                response_body=redact(response.text[:4000]),
                curl=redact(curl_command(response.request, self.session.variables)),
            )
        )
        del self.session.transcript[:-50]
