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
