"""Faults of the virtual reader and outbound webhooks."""

from reference_server.faults._model import fault, swap, unchecked

fault("reader-code-int", "READER-RESPONSE-FORMAT", "reader answers carry code as a number")
fault(
    "unattached-reader-401", "READER-424-NOT-ATTACHED", "a reader on no point answers 401, not 424"
)
fault("reader-key-not-checked", "READER-404-KEY-MISMATCH", "any device key of valid length works")
fault(
    "reader-no-auth-throttle",
    "READER-AUTH-FAILURE-THROTTLE",
    "failed device checks are never throttled",
)
fault("relay-not-fired", "READER-200-EVENT-AND-RELAY", "a granted read fires no relay")
fault("grant-outside-window", "READER-401-OUTSIDE-WINDOW", "reads ignore the validity window")
fault(
    "use-limit-not-decremented",
    "READER-USE-LIMIT-CONSUMED",
    "grants do not consume a limited credential's uses",
)
fault(
    "second-factor-granted",
    "READER-415-SECOND-FACTOR",
    "combined reader types are decided like single-factor ones",
)
fault(
    "list-includes-expired",
    "READER-LIST-ONLY-VALID",
    "the list holds every credential with a list for the point, valid or not",
)
fault("hmac-wrong-text", "HOOK-HMAC-SIGNATURE", "the signature leaves the path out of the text")
fault("hmac-timestamp-seconds", "HOOK-HMAC-TIMESTAMP", "the timestamp is in seconds")
fault("webhook-not-encrypted", "HOOK-ENCRYPTION-FIELDS", "payload fields are sent in clear")
fault("webhook-missing-charset", "HOOK-HEADERS-JSON", "Content-Type is sent without the charset")
fault("webhook-no-retry", "HOOK-RETRY", "a failed delivery is never attempted again")
fault(
    "webhook-sent-when-disabled",
    "HOOK-ENABLED-FLAG",
    "events are sent while the integration is disabled",
)
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
