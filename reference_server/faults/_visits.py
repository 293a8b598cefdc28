"""Faults of invitations and the visit lifecycle."""

from reference_server.faults._model import NOT_FOUND, fault, swap, unchecked

fault(
    "activation-not-rounded",
    "INV-ACTIVATION-ROUND-DOWN",
    "invitation activation is stored with its seconds",
)
fault(
    "expiry-not-rounded", "INV-EXPIRY-ROUND-UP", "invitation expiry is stored as sent, not at :59"
)
fault(
    "identical-update-200",
    "INV-UPDATE-IDENTICAL-425",
    "an invitation update identical to the stored one answers 200 and marks the visit updated",
)
fault(
    "watchlist-ignored-on-invite",
    "INV-WATCHLIST-451",
    "invitations are created without consulting the watchlists",
)
fault(
    "missing-host-201",
    "INV-REFERENCE-MISSING-422",
    "an invitation naming a host user that does not exist is stored",
)
fault(
    "underscore-spelling-ignored",
    "VER-INVITE-UNDERSCORE-SPELLINGS",
    "invitation fields sent in the underscore spelling are dropped",
)
fault(
    "location-name-tolerated",
    "INV-LOCATION-UNKNOWN-NAME-DEFAULT",
    "an unknown location name is accepted although the setting is at its default",
)
fault(
    "update-closed-accepted",
    "INV-UPDATE-CLOSED-409",
    "a cancelled or finished visit can still be updated (200)",
)
fault(
    "check-out-before-check-in",
    "VISIT-CHECK-OUT",
    "a visitor who never checked in can be checked out",
)
unchecked("invite-email-unchecked", "INV-FIELD-EMAIL", "email", "createInvite", "updateInvite")
swap("invite-unknown-400", "INV-READ-NOT-FOUND", NOT_FOUND, "getInvite")
fault(
    "invite-created-message-success",
    "INV-CREATE-201",
    "createInvite answers message `success` instead of `created`",
)
fault(
    "invite-read-shows-visitor-id",
    "INV-REGISTRATION-ID",
    "getInvite shows the visitor's UUID as registrationId",
)
fault(
    "invite-list-start-index-zero",
    "INV-LIST-ENVELOPE",
    "listInvites answers startIndex 0 whatever start was used",
)
fault(
    "invite-default-start-one",
    "INV-LIST-DEFAULTS",
    "listInvites without start begins at row 1",
)
swap("invite-limit-range-422", "INV-LIST-LIMIT-RANGE", (400, 422), "listInvites")
fault(
    "visitor-filter-total-unfiltered",
    "INV-LIST-VISITOR-FILTER",
    "with visitorUUID, totalCount still counts every visitor's invitations",
)
fault(
    "underscore-spelling-create-only",
    "INV-FIELD-SPELLINGS",
    "the underscore spellings are honoured on create but dropped on update",
)
fault(
    "location-name-kept-as-text",
    "INV-LOCATION-BY-NAME",
    "a location given by name is kept as text and the invitation refers to no location",
)
fault(
    "watchlist-denial-keeps-status",
    "VISIT-DENIED-ON-WATCHLIST",
    "an update refused with 451 leaves the visit in its pre-arrival status with its credential",
)
fault(
    "visitor-credential-from-now",
    "VISIT-CREDENTIAL-WINDOW",
    "the visitor credential becomes valid at creation instead of at the activation",
)
fault(
    "disabled-watchlists-consulted",
    "VISIT-WATCHLIST-CONSULTED",
    "disabled watchlists refuse visitors as enabled ones do",
)
