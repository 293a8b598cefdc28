"""Faults of watchlists, their entries and the match check."""

from reference_server.faults._model import NOT_FOUND, fault, swap, unchecked

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
