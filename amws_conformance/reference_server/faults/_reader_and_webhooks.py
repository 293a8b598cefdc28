"""Faults of the virtual reader, the readers' decision and outbound webhooks.

The faults of decisions inside a step override one decision (or the few linked ones) of the
step's policy (the policy seam, ``reference_server/_policy.py``): ``ReaderPolicy`` for the
decision every reader makes, ``VirtualReaderPolicy`` for the virtual reader's endpoints,
``WebhookPolicy`` for saving, emitting and sending events and ``PayloadPolicy`` for the
VisitDTO. The correct answer comes from ``super()`` and the class states only the deviation.
Validation and status faults stay declarative (``unchecked``, ``swap``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from amws_conformance.reference_server.domain.virtual_reader import Refusal, VirtualReaderPolicy
from amws_conformance.reference_server.faults._model import overrides, swap, unchecked
from amws_conformance.reference_server.hardware import readers
from amws_conformance.reference_server.hardware.readers import ReaderPolicy
from amws_conformance.reference_server.webhooks.dispatcher import WebhookPolicy, encrypted_fields
from amws_conformance.reference_server.webhooks.payload import PayloadPolicy

# Fault memory keys (``Policy.memory``): what a fault remembers between calls.
_LISTS_SERVED = "list-cached-for-a-minute"  # device uuid -> (server timestamp, entries)
CACHED_LIST_SECONDS = 60.0  # how long list-cached-for-a-minute serves a copy
_Served = tuple[float, list[dict[str, Any]]]  # a list served: when (server timestamp), what


@overrides("reader-code-int", "READER-RESPONSE-FORMAT", "reader answers carry code as a number")
class _CodeAsNumber(VirtualReaderPolicy):
    def outcome_code(self, status: int) -> Any:
        return status


@overrides(
    "unattached-reader-401", "READER-424-NOT-ATTACHED", "a reader on no point answers 401, not 424"
)
class _Unattached401(VirtualReaderPolicy):
    def unattached_refusal(self) -> Refusal:
        return 401, "denied", "the reader has no access control point"


@overrides(
    "reader-key-not-checked", "READER-404-KEY-MISMATCH", "any device key of valid length works"
)
class _AnyKey(VirtualReaderPolicy):
    def key_accepted(self, stored: str, presented: str) -> bool:
        return True


@overrides(
    "reader-no-auth-throttle",
    "READER-AUTH-FAILURE-THROTTLE",
    "failed device checks are never throttled",
)
class _FailuresNotThrottled(VirtualReaderPolicy):
    def holds_off_failing_address(self) -> bool:
        return False


@overrides("relay-not-fired", "READER-200-EVENT-AND-RELAY", "a granted read fires no relay")
class _NoRelay(ReaderPolicy):
    def fires_relay(self) -> bool:
        return False


@overrides("grant-outside-window", "READER-401-OUTSIDE-WINDOW", "reads ignore the validity window")
class _WindowIgnored(ReaderPolicy):
    # Two decisions: the window-derived statuses pass, and the window itself is not checked.
    def status_admits(self, status: str) -> bool:
        return status in ("VALID", "EXPIRED") or super().status_admits(status)

    def inside_window(self, credential: dict[str, Any], now: datetime) -> bool:
        return True


@overrides(
    "use-limit-not-decremented",
    "READER-USE-LIMIT-CONSUMED",
    "grants do not consume a limited credential's uses",
)
class _GrantsFree(ReaderPolicy):
    def consumes_use(self, granted: bool) -> bool:
        return not granted and super().consumes_use(granted)


@overrides(
    "second-factor-granted",
    "READER-415-SECOND-FACTOR",
    "combined reader types are decided like single-factor ones",
)
class _SecondFactorIgnored(ReaderPolicy):
    def refuses_second_factor(self, credential: dict[str, Any]) -> bool:
        return False


@overrides(
    "list-includes-expired",
    "READER-LIST-ONLY-VALID",
    "the list holds every credential with a list for the point, valid or not",
)
class _ListsEveryListed(VirtualReaderPolicy):
    def lists_credential(self, system: str, credential: dict[str, Any], point: str) -> bool:
        return readers.lists_open(self.server, system, credential, point)


@overrides(
    "hmac-wrong-text", "HOOK-HMAC-SIGNATURE", "the signature leaves the path out of the text"
)
class _PathNotSigned(WebhookPolicy):
    def signed_path(self, url: str) -> str:
        return ""


@overrides("hmac-timestamp-seconds", "HOOK-HMAC-TIMESTAMP", "the timestamp is in seconds")
class _TimestampSeconds(WebhookPolicy):
    def signature_timestamp(self, now: float) -> str:
        return str(int(super().signature_timestamp(now)) // 1000)


@overrides("webhook-not-encrypted", "HOOK-ENCRYPTION-FIELDS", "payload fields are sent in clear")
class _NotEncrypted(WebhookPolicy):
    def encrypts(self, encryption: dict[str, Any]) -> bool:
        return False


@overrides(
    "webhook-missing-charset", "HOOK-HEADERS-JSON", "Content-Type is sent without the charset"
)
class _NoCharset(WebhookPolicy):
    def content_type(self) -> str:
        return "application/json"


@overrides("webhook-no-retry", "HOOK-RETRY", "a failed delivery is never attempted again")
class _NoRetry(WebhookPolicy):
    def retry_delays(self, delays: tuple[float, ...]) -> tuple[float, ...]:
        return ()


@overrides(
    "webhook-sent-when-disabled",
    "HOOK-ENABLED-FLAG",
    "events are sent while the integration is disabled",
)
class _SentWhenDisabled(WebhookPolicy):
    def integration_sends(self, settings: dict[str, Any]) -> bool:
        return True


unchecked("reader-code-unchecked", "READER-422-CODE-LENGTH", "code", "virtualRead", "virtualQrRead")
unchecked(
    "reader-key-unchecked",
    "READER-422-KEY-LENGTH",
    "key",
    "virtualRead",
    "virtualQrRead",
    "virtualReaderList",
    "virtualQrReaderList",
)
swap(
    "device-unknown-401",
    "READER-404-UNKNOWN-DEVICE",
    (404, 401),
    "virtualRead",
    "virtualQrRead",
    "virtualReaderList",
    "virtualQrReaderList",
)
swap(
    "reader-body-400",
    "READER-422-MISSING-FIELD",
    (422, 400),
    "virtualRead",
    "virtualQrRead",
    "virtualReaderList",
    "virtualQrReaderList",
)
swap("qr-reader-denial-404", "READER-PATHS-EQUIVALENT", (401, 404), "virtualQrRead")


@overrides(
    "reader-checks-authorization",
    "READER-NO-AUTH-HEADER",
    "a reader request carrying an unknown API key in Authorization answers 401",
)
class _AuthorizationChecked(VirtualReaderPolicy):
    def authorization_refusal(self, header: str | None) -> Refusal | None:
        if header is not None and self.server.key_by_value(header.removeprefix("Bearer ")) is None:
            return 401, "unauthorised", "the API key is not valid"
        return super().authorization_refusal(header)


@overrides("grant-reason-ok", "READER-200-GRANT-BODY", 'a grant\'s reason is "OK", not "granted"')
class _GrantReasonOk(VirtualReaderPolicy):
    def read_answer(self, decided: readers.Outcome) -> readers.Outcome:
        answer = super().read_answer(decided)
        return replace(answer, reason="OK") if answer.status == 200 else answer


@overrides(
    "unknown-code-404", "READER-401-UNKNOWN-CREDENTIAL", "a code matching nothing answers 404"
)
class _UnknownCode404(VirtualReaderPolicy):
    def read_answer(self, decided: readers.Outcome) -> readers.Outcome:
        answer = super().read_answer(decided)
        if answer.status == 401 and answer.credential is None:
            return replace(answer, status=404, reason="unknown credential")
        return answer


@overrides(
    "no-list-means-everywhere",
    "READER-401-NOT-ALLOWED-HERE",
    "a credential with no access control list is admitted at every point",
)
class _UnlistedEverywhere(ReaderPolicy):
    def allowed_at(self, system: str, credential: dict[str, Any], point: str) -> bool:
        unlisted = not credential.get("accessControlListUuids")
        return unlisted or super().allowed_at(system, credential, point)


@overrides(
    "denial-consumes-use",
    "READER-401-RECORDED-FINAL",
    "a denied read of a limited credential consumes one of its uses",
)
class _DenialsSpend(ReaderPolicy):
    def consumes_use(self, granted: bool) -> bool:
        return not granted or super().consumes_use(granted)


@overrides(
    "reader-throttle-per-address",
    "READER-429-PER-DEVICE",
    "the reader allowance is counted per client address, shared by all devices",
)
class _AllowancePerAddress(VirtualReaderPolicy):
    def allowance_name(self, device_uuid: str, client: str) -> str:
        return client


@overrides(
    "virtual-grant-no-visit-move",
    "READER-VISIT-STATUS-AS-PHYSICAL",
    "a granted virtual read of a visitor credential moves no visit",
)
class _VirtualGrantStill(ReaderPolicy):
    def grant_moves_visit(self, device_uuid: str | None) -> bool:
        # Only the virtual reader endpoints name a device.
        return not device_uuid and super().grant_moves_visit(device_uuid)


@overrides("list-pin-as-text", "READER-LIST-ENTRY-SHAPE", "list entries carry pin as text")
class _PinAsText(VirtualReaderPolicy):
    def entry_pin(self, pin: Any) -> Any:
        return str(pin) if pin is not None else super().entry_pin(pin)


@overrides("empty-list-404", "READER-LIST-EMPTY", "a list with no valid credential answers 404")
class _EmptyList404(VirtualReaderPolicy):
    def empty_list_refusal(self) -> Refusal | None:
        return 404, "not found", "no valid credentials for this device"


@overrides(
    "list-cached-for-a-minute",
    "READER-LIST-SNAPSHOT",
    "a device's list is served from a copy made up to a minute earlier",
)
class _ListCached(VirtualReaderPolicy):
    # Two decisions: each list served is kept, and a device asking again within the minute
    # gets that copy.
    def list_served(self, device_uuid: str, entries: list[dict[str, Any]]) -> None:
        super().list_served(device_uuid, entries)
        self.memory(_LISTS_SERVED)[device_uuid] = (self.server.clock.timestamp(), entries)

    def earlier_list(self, device_uuid: str) -> list[dict[str, Any]] | None:
        served: _Served | None = self.memory(_LISTS_SERVED).get(device_uuid)
        if served is None or self.server.clock.timestamp() - served[0] >= CACHED_LIST_SECONDS:
            return super().earlier_list(device_uuid)
        return served[1]


@overrides("webhook-posted-twice", "HOOK-POST-PER-EVENT", "every event is posted twice")
class _PostedTwice(WebhookPolicy):
    def post_delays(self) -> tuple[float, ...]:
        return (*super().post_delays(), 0.05)


@overrides("visit-created-not-sent", "HOOK-VISIT-CREATED", "creating an invitation posts no event")
class _CreatedNotSent(WebhookPolicy):
    def posts_event(self, status: str) -> bool:
        return status != "VISIT_CREATED" and super().posts_event(status)


@overrides(
    "optional-header-authorization-only",
    "HOOK-OPTIONAL-HEADER",
    "the optional header is sent only when it is named Authorization",
)
class _AuthorizationHeaderOnly(WebhookPolicy):
    def optional_header(self, header: dict[str, str] | None) -> dict[str, str] | None:
        header = super().optional_header(header)
        if header and header["name"].lower() != "authorization":
            return None
        return header


@overrides(
    "hmac-headers-without-key",
    "HOOK-HMAC-HEADERS-WHEN-KEY",
    "without an HMAC key the signature headers are still sent (signed with an empty key)",
)
class _SignedWithoutKey(WebhookPolicy):
    def signing_key(self, saved: str | None) -> str | None:
        key = super().signing_key(saved)
        return "" if key is None else key


@overrides(
    "hmac-key-length-unchecked",
    "HOOK-CONFIG-SECRET-FORMATS",
    "an HMAC key of any length is saved",
)
class _AnyKeyLength(WebhookPolicy):
    def hmac_key_length_allowed(self, length: int) -> bool:
        return True


@overrides(
    "override-added-to-default",
    "HOOK-ENCRYPTION-OVERRIDE",
    "the override list is encrypted on top of the default list",
)
class _OverrideOnDefault(WebhookPolicy):
    def fields_encrypted(self, encryption: dict[str, Any]) -> list[str]:
        default = encrypted_fields({**encryption, "fields": []})
        return sorted({*super().fields_encrypted(encryption), *default})


@overrides(
    "access-code-always-encrypted",
    "HOOK-ENCRYPTION-OVERRIDE",
    "accessCode is encrypted even when an override list leaves it out",
)
class _AccessCodeAlwaysEncrypted(WebhookPolicy):
    def fields_encrypted(self, encryption: dict[str, Any]) -> list[str]:
        return sorted({*super().fields_encrypted(encryption), "accessCode"})


@overrides("payload-uuid32-dashed", "HOOK-PAYLOAD-SHAPE", "uuid32 values keep their dashes")
class _Uuid32Dashed(PayloadPolicy):
    def uuid32(self, uuid: str) -> str:
        return uuid
