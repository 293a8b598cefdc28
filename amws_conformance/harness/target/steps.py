"""The steps of one exchange of the harness client, one per concern.

The client (harness/target/client.py) composes them once, in this order, around its one send
(harness/target/chain.py: how they compose, and the call they hand on). Outermost first:

1. :class:`Guard` refuses to change a record the run did not create;
2. :class:`Checks` (a hook) applies the global checks, once the record is in the ledger;
3. :class:`Hold` holds an interrupt back from a create's send until its record is in the ledger;
4. :class:`Register` (a hook) keeps the ledger true: what a create made, what a delete removed;
5. :class:`Record` (a hook) keeps the transcript, the coverage and the operations a test reached;
6. :class:`Encryption` encrypts an encrypting key's listed fields, and decrypts the answer's;
7. :class:`Retry` waits out a 429 (Retry-After, doubling on each further one) and sends again;
8. :class:`Pace`, before each attempt: the run's time, the key, and a wait for its bucket;
9. :class:`Book` (a hook) books each answer's units to the test and the key that paid them;
10. :class:`Send` sends within the per-request deadline and tells the run's health.

A view of a client (``client.unchecked`` ...) gives its calls :class:`~chain.Options`; the step
an option turns off (its docstring says which) reads it from the call it handles.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from amws_conformance import spec
from amws_conformance.harness._checks import RuleViolation, check, normative
from amws_conformance.harness.evidence.curl import command as curl_command
from amws_conformance.harness.lifecycle.ledger import delete_path_for, ends_record
from amws_conformance.harness.plan.spend import FAILED_AUTH_COST, SETUP, answered_cost
from amws_conformance.harness.target.chain import Call, Handler, Hook
from amws_conformance.harness.target.crypto import decrypt_text, encrypt_text
from amws_conformance.harness.target.health import TargetUnreachable
from amws_conformance.harness.target.health import send as send_within
from amws_conformance.harness.target.pool import KeyPool
from amws_conformance.harness.target.session import Exchange, Session

_UUID = spec.uuid_pattern()
MAX_429_RETRIES = 4


class SafetyError(AssertionError):
    """The suite was about to change a record it did not create."""


# -- the steps, outermost first ------------------------------------------------------------
class Guard:
    """Refuses a write that addresses a record the run did not create (off: ``foreign``, the
    cleanup's view, which removes what the ledger holds by paths it wrote itself)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def __call__(self, call: Call, inner: Handler) -> httpx.Response:
        if call.method.upper() in ("PUT", "DELETE", "POST") and not call.options.foreign:
            self._refuse_foreign(call)
        return inner(call)

    def _refuse_foreign(self, call: Call) -> None:
        op = call.op
        if op is None or not op.keyed:
            return
        if op.method == "POST" and not _UUID.search(call.path):
            return
        for value in _UUID.findall(urlsplit(call.path).path):
            if not self.session.ledger.owns(value):
                raise SafetyError(
                    f"refusing {call.method} {call.path}: {value} was not created by this run"
                )


class Checks(Hook):
    """The global checks of every answer of a documented operation (off: ``unchecked``)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def answered(self, call: Call, response: httpx.Response) -> None:
        if call.op is None or call.options.unchecked:
            return
        violations = check(call.op, call.json, response, call.params)
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


class Hold:
    """Holds an interrupt back from a create's send until its record is in the ledger: the send
    enters the session's shield in the call's hold, a retry lets go of it before its wait (a
    refused create made nothing), and this step lets go once the ledger has the record."""

    def __call__(self, call: Call, inner: Handler) -> httpx.Response:
        with call.held:
            return inner(call)


class Register(Hook):
    """Keeps the ledger true: what a create made, what a delete or a claim removed. Ahead of
    the checks: a record made by an answer that breaks a check is still the run's to remove."""

    def __init__(self, session: Session, key_class: str) -> None:
        self.session, self.key_class = session, key_class

    def answered(self, call: Call, response: httpx.Response) -> None:
        op, body = call.op, call.json
        if op is None or response.status_code not in (200, 201, 204):
            return
        ledger = self.session.ledger
        try:
            answer = response.json() if response.content else None
        except ValueError:
            answer = None
        refused = isinstance(answer, dict) and answer.get("code") not in (None, 200, 201)
        if op.method == "DELETE" and refused:
            return  # an HTTP 200 carrying a refusal in its body (role delete): nothing changed
        if op.method == "DELETE" or ends_record(op.operation_id, body):
            ledger.deleted(urlsplit(call.path).path)
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
                delete_path_for(op, call.path_params, new),
                self.key_class,
                op.operation_id,
                self.session.booking,
            )


class Record(Hook):
    """Keeps the exchange in the transcript (redacted, the last 50), counts the operation's
    coverage, and notes what the test (or shared set-up) reached: the operations it called and
    those of a shape the documents leave open."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def answered(self, call: Call, response: httpx.Response) -> None:
        session, redact = self.session, self.session.redact
        body = call.json
        session.transcript.append(
            Exchange(
                method=call.method,
                url=str(response.request.url),
                request_headers={k: redact(v) for k, v in response.request.headers.items()},
                request_body=json.loads(redact(json.dumps(body))) if body is not None else None,
                status=response.status_code,
                response_headers=dict(response.headers),
                response_body=redact(response.text[:4000]),
                curl=redact(curl_command(response.request, session.variables)),
            )
        )
        del session.transcript[:-50]
        op = call.op
        if op is None:
            return
        session.coverage[op.operation_id] += 1
        if session.observing:
            session.spend.called(session.booking, op.operation_id)
        if op.assumed and session.observing:
            booking = session.booking
            if booking.startswith(SETUP):
                session.setup_assumed.setdefault(booking, set()).add(op.operation_id)
            else:
                session.assumed_operations.add(op.operation_id)


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


class Encryption:
    """For an encrypting key (its profile settings given): the listed fields of a JSON body
    encrypted on the way out, and of a JSON answer decrypted (off: ``raw``)."""

    def __init__(self, settings: dict[str, Any] | None) -> None:
        self.settings = settings

    def __call__(self, call: Call, inner: Handler) -> httpx.Response:
        if not self.settings or call.options.raw:
            return inner(call)
        secret, iv = self.settings["secret"], self.settings["iv"]
        if call.json is not None:
            call.wire_json = _encode_fields(
                call.json, self._fields(), lambda text: encrypt_text(text, secret, iv)
            )
        response = inner(call)
        try:
            body = json.loads(response.content)
        except ValueError:
            return response

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

    def _fields(self) -> frozenset[str]:
        assert self.settings is not None
        listed = self.settings.get("fields") or spec.openapi()["x-default-encrypted-fields"]
        return frozenset(listed)


class Retry:
    """Sends again after a 429, at most :data:`MAX_429_RETRIES` times (off: ``unretried``).
    Retry-After is a lower bound (buckets are per node): the wait doubles on each further 429."""

    def __call__(self, call: Call, inner: Handler) -> httpx.Response:
        wait, attempts = 1.0, 0
        while True:
            response = inner(call)
            if response.status_code != 429 or call.options.unretried or attempts >= MAX_429_RETRIES:
                return response
            call.held.close()  # refused: nothing was made, an interrupt held back may stop now
            if call.key is not None and call.key.pacer is not None:
                call.key.pacer.drained()
            advised = response.headers.get("retry-after", "")
            wait = max(wait * 2 if attempts else 0, float(advised) if advised.isdigit() else wait)
            time.sleep(wait)
            attempts += 1


class Pace:
    """Before each attempt: ends the test if the run's time is up, picks the key the attempt
    goes with (its Authorization header unless the caller named one), and waits until the
    key's modelled bucket holds the operation's cost (the wait off: ``unpaced``)."""

    def __init__(self, session: Session, keys: KeyPool, failing: bool) -> None:
        self.session, self.keys, self.failing = session, keys, failing

    def __call__(self, call: Call, inner: Handler) -> httpx.Response:
        if self.session.observing and self.session.before_request is not None:
            self.session.before_request()
        call.wire_headers = dict(call.headers or {})
        call.key = None
        op = call.op
        if op is not None and op.keyed:
            cost = FAILED_AUTH_COST if self.failing else int(op.rate_cost or 0)
            # A header given names its own key: paced as the first key, the one tests name.
            call.key = self.keys.take(None if call.options.unpaced else cost, pinned=call.named)
            if call.key.header is not None:
                call.wire_headers.setdefault("Authorization", call.key.header)
        return inner(call)


class Book(Hook):
    """Books each answer (each attempt's) to the current booking: the units the target charged,
    to the client's bucket and the key that paid them; a 429 the client will wait out (not
    ``unretried``) also as one the pacing model did not plan."""

    def __init__(self, session: Session, bucket: str, failing: bool) -> None:
        self.session, self.bucket, self.failing = session, bucket, failing

    def answered(self, call: Call, response: httpx.Response) -> None:
        spend, test = self.session.spend, self.session.booking
        try:
            elapsed = response.elapsed.total_seconds()
        except RuntimeError:  # an answer made up in a test, never sent
            elapsed = 0.0
        op, status = call.op, response.status_code
        if op is None or not op.keyed:
            spend.book(test, self.bucket, 0, elapsed)  # keyless: throttled, no key's bucket
            return
        # A failing client's units are the failed-authentication bucket's, whichever key.
        paid_by = call.key.label if call.key is not None and not self.failing else ""
        spend.book(test, self.bucket, answered_cost(op, status), elapsed, paid_by)
        if status == 429 and not call.options.unretried:
            request = response.request
            spend.refused(test, paid_by or self.bucket, f"{request.method} {request.url.path}")


class Send:
    """The one way out: sends the call as the steps made it, within the run's per-request
    deadline, and tells the run's health whether the target answered."""

    def __init__(self, session: Session, http: httpx.Client) -> None:
        self.session, self.http = session, http

    def __call__(self, call: Call) -> httpx.Response:
        request = self.http.build_request(
            call.method,
            call.path,
            json=call.wire_json,
            content=call.content,
            files=call.files,
            params=call.params,
            headers=call.wire_headers,
        )
        if call.op is not None and call.op.creates:
            call.held.enter_context(self.session.shield())
        health = self.session.health
        # Only the target's own address speaks for its health: a link it handed out may point
        # elsewhere, and that host not answering says nothing of the target.
        own = request.url.netloc == httpx.URL(self.session.base_url).netloc
        try:
            response = send_within(self.http, request, health.request_seconds)
        except httpx.TransportError as error:
            if own:
                health.unanswered(error)
            if isinstance(error, TargetUnreachable):
                raise
            raise TargetUnreachable(str(error) or type(error).__name__, request=request) from error
        if own:
            health.answered()
        return response
