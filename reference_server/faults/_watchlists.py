"""Faults of watchlists, their entries and the match check."""

from reference_server.faults._model import (
    CATALOGUE,
    NOT_FOUND,
    Fault,
    fault,
    optional,
    swap,
    unchecked,
)

fault("match-writes-audit", "WL-MATCH-READ-ONLY", "a match check leaves an audit-trail record")
fault(
    "disabled-watchlist-consulted",
    "WL-DISABLED-NOT-CONSULTED",
    "disabled watchlists are consulted like enabled ones",
)
fault(
    "entry-other-watchlist-readable",
    "WL-ENTRY-WRONG-WATCHLIST",
    "an entry is reachable through any watchlist of the system",
)
fault(
    "watchlist-delete-keeps-entries",
    "WL-DELETE-HARD",
    "deleting a watchlist leaves its entries behind (they still match)",
)
fault(
    "watchlist-delete-keeps-flags",
    "WL-DELETE-HARDWARE-FIRST",
    "deleting a watchlist leaves its flags on the hardware",
)
fault(
    "match-duplicates-not-collapsed",
    "WL-MATCH-DEDUP",
    "a match answers one hit per matching field instead of one per entry",
)
fault("entry-count-frozen", "WL-ENTRY-COUNT", "entryCount always reads 0")
fault(
    "match-type-per-field",
    "WL-MATCH-TYPE-KINDS",
    "matchType names the field that hit instead of its kind",
)
fault(
    "watchlist-audit-unnamed",
    "WL-AUDIT-KEY-NAME",
    "watchlist writes are audited without the API key's name",
)
unchecked(
    "watchlist-name-unchecked", "WL-FIELD-LENGTH", "name", "createWatchlist", "updateWatchlist"
)
unchecked(
    "entry-reason-unchecked",
    "WL-ENTRY-FIELD-LENGTH",
    "reason",
    "createWatchlistEntry",
    "updateWatchlistEntry",
)
unchecked("match-identity-unchecked", "WL-MATCH-FIELD-LENGTH", "identityNumber", "matchWatchlists")
swap(
    "watchlist-unknown-400",
    "WL-NOT-FOUND",
    NOT_FOUND,
    "getWatchlist",
    "updateWatchlist",
    "deleteWatchlist",
)
optional("watchlist-put-name-optional", "WL-FIELD-REQUIRED", "name", "updateWatchlist")
fault(
    "watchlist-created-disabled", "WL-ENABLED-DEFAULT", "a watchlist created without enabled is off"
)
fault("watchlist-list-enabled-only", "WL-READ", "GET /watchlists leaves out disabled watchlists")
fault(
    "watchlist-put-cannot-disable", "WL-DISABLE-BY-PUT", "a PUT with enabled false changes nothing"
)
fault("watchlist-put-cannot-enable", "WL-ENABLE-BY-PUT", "a disabled watchlist stays disabled")
fault(
    "only-first-watchlist-consulted",
    "WL-CONSULTED-ON-ARRIVAL",
    "arrival checks (and the match) consult only the oldest enabled watchlist",
)
# The identifying-field rule is the schema's body-level anyOf, so the validation seam skips
# body-level rules; the entry handler then stores what it was given.
CATALOGUE["entry-needs-no-identifier"] = Fault(
    "entry-needs-no-identifier",
    "WL-ENTRY-IDENTIFYING-FIELD",
    "an entry with no identifying field (only a reason) is stored",
    operations=("createWatchlistEntry", "updateWatchlistEntry"),
    unchecked="body",
)
fault("entry-reason-not-read", "WL-ENTRY-SHAPE", "an entry reads reason null")
fault(
    "entry-stored-in-unknown-watchlist",
    "WL-ENTRY-CREATE-UNKNOWN-WATCHLIST",
    "an entry posted to an unknown watchlist is stored (201)",
)
fault(
    "entry-delete-keeps-record", "WL-ENTRY-DELETE-HARD", "an entry DELETE only withdraws its flag"
)
fault("entries-start-one-based", "WL-ENTRIES-PAGING", "the entries list's start defaults to 1")
fault(
    "entries-list-every-watchlist",
    "WL-ENTRIES-ENVELOPE",
    "the entries list holds the entries of every watchlist",
)
CATALOGUE["match-needs-no-field"] = Fault(
    "match-needs-no-field",
    "WL-MATCH-FIELD-REQUIRED",
    "a match request without identifying fields answers 200",
    operations=("matchWatchlists",),
    unchecked="body",
)
fault(
    "vehicle-checked-only-without-identity",
    "WL-MATCH-IDENTITY-AND-VEHICLE",
    "vehicle fields are checked only when no identity field hits",
)
fault("no-match-null-matches", "WL-MATCH-NONE", "a match without hits answers matches null")
fault(
    "match-watchlist-uuid-reused",
    "WL-MATCH-SHAPE",
    "every match names the watchlist of the first match",
)
fault(
    "watchlist-visitors-first-entry-only",
    "WL-VISITORS",
    "the watchlist visitors list consults only the watchlist's first entry",
)
fault(
    "entry-visitors-whole-watchlist",
    "WL-ENTRY-VISITORS",
    "an entry's visitors list holds the visitors of every entry of its watchlist",
)
