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
swap("qr-reader-denial-404", "READER-PATHS-EQUIVALENT", (401, 404), "virtualQrRead")
fault(
    "reader-checks-authorization",
    "READER-NO-AUTH-HEADER",
    "a reader request carrying an unknown API key in Authorization answers 401",
)
fault("grant-reason-ok", "READER-200-GRANT-BODY", 'a grant\'s reason is "OK", not "granted"')
fault("unknown-code-404", "READER-401-UNKNOWN-CREDENTIAL", "a code matching nothing answers 404")
fault(
    "no-list-means-everywhere",
    "READER-401-NOT-ALLOWED-HERE",
    "a credential with no access control list is admitted at every point",
)
fault(
    "denial-consumes-use",
    "READER-401-RECORDED-FINAL",
    "a denied read of a limited credential consumes one of its uses",
)
fault(
    "reader-throttle-per-address",
    "READER-429-PER-DEVICE",
    "the reader allowance is counted per client address, shared by all devices",
)
fault(
    "virtual-grant-no-visit-move",
    "READER-VISIT-STATUS-AS-PHYSICAL",
    "a granted virtual read of a visitor credential moves no visit",
)
fault("list-pin-as-text", "READER-LIST-ENTRY-SHAPE", "list entries carry pin as text")
fault("empty-list-404", "READER-LIST-EMPTY", "a list with no valid credential answers 404")
fault(
    "list-cached-for-a-minute",
    "READER-LIST-SNAPSHOT",
    "a device's list is served from a copy made up to a minute earlier",
)
fault("webhook-posted-twice", "HOOK-POST-PER-EVENT", "every event is posted twice")
fault("visit-created-not-sent", "HOOK-VISIT-CREATED", "creating an invitation posts no event")
fault(
    "optional-header-authorization-only",
    "HOOK-OPTIONAL-HEADER",
    "the optional header is sent only when it is named Authorization",
)
fault(
    "hmac-headers-without-key",
    "HOOK-HMAC-HEADERS-WHEN-KEY",
    "without an HMAC key the signature headers are still sent (signed with an empty key)",
)
fault(
    "hmac-key-length-unchecked",
    "HOOK-CONFIG-SECRET-FORMATS",
    "an HMAC key of any length is saved",
)
fault(
    "override-added-to-default",
    "HOOK-ENCRYPTION-OVERRIDE",
    "the override list is encrypted on top of the default list",
)
fault("payload-uuid32-dashed", "HOOK-PAYLOAD-SHAPE", "uuid32 values keep their dashes")
