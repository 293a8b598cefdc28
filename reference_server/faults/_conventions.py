"""Faults of conventions, errors, paging, authentication, isolation and rate limits."""

from reference_server.faults._model import fault

fault("echo-rejected-value", "ERR-NO-ECHO", "422 reasons quote the rejected value")
fault(
    "offset-ignored",
    "CONV-TIMESTAMP-OFFSET-CONVERTED",
    "a timestamp's offset is dropped, not converted",
)
fault(
    "no-milliseconds", "CONV-TIMESTAMP-UTC-MILLIS", "timestamps are returned without milliseconds"
)
fault("bad-uuid-404", "CONV-UUID-PATH-422", "a non-UUID path value answers 404 instead of 422")
fault("malformed-json-422", "ERR-400-BODY", "an unreadable JSON body answers 422 instead of 400")
fault("unknown-field-rejected", "CONV-UNKNOWN-FIELDS-IGNORED", "an unknown request field gets 422")
fault("write-returns-record", "CONV-WRITE-ACKNOWLEDGEMENT", "writes answer with the stored record")
fault("paging-total-wrong", "PAGE-TOTAL-COUNT", "totalCount reports the page size, not the total")
fault("bearer-not-stripped", "AUTH-BEARER-PREFIX", "a Bearer-prefixed key is not recognised")
fault("disabled-key-accepted", "AUTH-DISABLED-KEY-401", "a disabled key authenticates")
fault("readonly-can-write", "AUTH-PERMISSION-READ-WRITE", "write permissions are not checked")
fault("relay-control-with-read", "AUTH-RELAY-CONTROL-SEPARATE", "reading points allows the trigger")
fault("cross-system-read", "CONV-SYSTEM-SCOPE-404", "another system's record can be read")
fault("list-leaks-other-system", "CONV-SYSTEM-SCOPE-LISTS", "name lists include other systems")
fault("encryption-ignored", "AUTH-PAYLOAD-ENCRYPTION", "responses to an encrypting key are plain")
fault(
    "localhost-not-enforced", "AUTH-RESTRICT-TO-LOCALHOST", "the loopback-only setting is ignored"
)
fault("no-retry-after", "RATE-RETRY-AFTER-HEADER", "429 answers carry no Retry-After header")
fault("bucket-never-refills", "RATE-REFILL-800-PER-MINUTE", "the bucket does not refill over time")
fault("bucket-too-large", "RATE-BUCKET-2000", "documented buckets hold 4000 units instead of 2000")
fault("failed-auth-free", "RATE-COST-FAILED-AUTH-400", "failed authentications charge nothing")
fault(
    "reads-free", "RATE-COST-LIST-READ-DELETE-STATUS-30", "reads, lists and deletes charge nothing"
)
fault(
    "watchlist-451-once",
    "ERR-451-FINAL",
    "repeating an invitation refused with 451 creates it",
)
