"""Faults of invitations and the visit lifecycle.

The faults of decisions inside an invitation, listing or lifecycle step override one decision
of ``InvitePolicy``, ``InviteListPolicy`` or ``VisitPolicy`` each (the policy seam,
``reference_server/_policy.py``): the correct answer comes from ``super()`` and the class states
only the deviation. Validation and status faults stay declarative (``unchecked``, ``swap``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from amws_conformance.reference_server._time import format_instant
from amws_conformance.reference_server.domain.invite_list import InviteListPolicy
from amws_conformance.reference_server.domain.invites import InvitePolicy
from amws_conformance.reference_server.domain.visits import (
    CHECK_OUT,
    KIND,
    PRE_ARRIVAL,
    VisitPolicy,
)
from amws_conformance.reference_server.faults._model import NOT_FOUND, overrides, swap, unchecked
from amws_conformance.reference_server.store import Record


@overrides(
    "activation-not-rounded",
    "INV-ACTIVATION-ROUND-DOWN",
    "invitation activation is stored with its seconds",
)
class _ActivationNotRounded(InvitePolicy):
    def stored_activation(self, text: str) -> str:
        return text


@overrides(
    "expiry-not-rounded", "INV-EXPIRY-ROUND-UP", "invitation expiry is stored as sent, not at :59"
)
class _ExpiryNotRounded(InvitePolicy):
    def stored_expiry(self, text: str) -> str:
        return text


@overrides(
    "identical-update-200",
    "INV-UPDATE-IDENTICAL-425",
    "an invitation update identical to the stored one answers 200 and marks the visit updated",
)
class _IdenticalUpdateAccepted(InvitePolicy):
    def refuses_identical_update(self) -> bool:
        return False


@overrides(
    "watchlist-ignored-on-invite",
    "INV-WATCHLIST-451",
    "invitations are created without consulting the watchlists",
)
class _WatchlistIgnored(InvitePolicy):
    def refuses_visitor(self, system: str, visit: Mapping[str, Any]) -> bool:
        return False


@overrides(
    "missing-host-201",
    "INV-REFERENCE-MISSING-422",
    "an invitation naming a host user that does not exist is stored",
)
class _MissingHostStored(InvitePolicy):
    def requires_known_host(self) -> bool:
        return False


@overrides(
    "underscore-spelling-ignored",
    "VER-INVITE-UNDERSCORE-SPELLINGS",
    "invitation fields sent in the underscore spelling are dropped",
)
class _UnderscoreIgnored(InvitePolicy):
    def reads_underscore_spellings(self, operation_id: str) -> bool:
        return False


@overrides(
    "location-name-tolerated",
    "INV-LOCATION-UNKNOWN-NAME-DEFAULT",
    "an unknown location name is accepted although the setting is at its default",
)
class _UnknownLocationNameTolerated(InvitePolicy):
    def accepts_unknown_location_name(self) -> bool:
        return True


@overrides(
    "update-closed-accepted",
    "INV-UPDATE-CLOSED-409",
    "a cancelled or finished visit can still be updated (200)",
)
class _ClosedUpdateAccepted(InvitePolicy):
    def updates_visit_in(self, status: str) -> bool:
        return True


@overrides(
    "check-out-before-check-in",
    "VISIT-CHECK-OUT",
    "a visitor who never checked in can be checked out",
)
class _CheckOutBeforeCheckIn(VisitPolicy):
    def may_move(self, current: str | None, target: str) -> bool:
        skipped = current in PRE_ARRIVAL and target == CHECK_OUT
        return skipped or super().may_move(current, target)


unchecked("invite-email-unchecked", "INV-FIELD-EMAIL", "email", "createInvite", "updateInvite")
swap("invite-unknown-400", "INV-READ-NOT-FOUND", NOT_FOUND, "getInvite")


@overrides(
    "invite-created-message-success",
    "INV-CREATE-201",
    "createInvite answers message `success` instead of `created`",
)
class _CreatedMessageSuccess(InvitePolicy):
    def created_message(self) -> str:
        return "success"


@overrides(
    "invite-read-shows-visitor-id",
    "INV-REGISTRATION-ID",
    "getInvite shows the visitor's UUID as registrationId",
)
class _ReadShowsVisitorId(InvitePolicy):
    def registration_id_shown(self, record: Mapping[str, Any]) -> str | None:
        return record.get("visitorId")


@overrides(
    "invite-list-start-index-zero",
    "INV-LIST-ENVELOPE",
    "listInvites answers startIndex 0 whatever start was used",
)
class _StartIndexZero(InviteListPolicy):
    def start_index(self, start: int) -> int:
        return 0


@overrides(
    "invite-default-start-one",
    "INV-LIST-DEFAULTS",
    "listInvites without start begins at row 1",
)
class _DefaultStartOne(InviteListPolicy):
    def start_when_omitted(self, default: int) -> int:
        return 1


swap("invite-limit-range-422", "INV-LIST-LIMIT-RANGE", (400, 422), "listInvites")


@overrides(
    "visitor-filter-total-unfiltered",
    "INV-LIST-VISITOR-FILTER",
    "with visitorUUID, totalCount still counts every visitor's invitations",
)
class _TotalIgnoresVisitorFilter(InviteListPolicy):
    def total_count(
        self, system: str, rows: list[Record], in_window: Callable[[Record], bool]
    ) -> int:
        return len(self.server.store.all(KIND, system, in_window))


@overrides(
    "underscore-spelling-create-only",
    "INV-FIELD-SPELLINGS",
    "the underscore spellings are honoured on create but dropped on update",
)
class _UnderscoreCreateOnly(InvitePolicy):
    def reads_underscore_spellings(self, operation_id: str) -> bool:
        read = super().reads_underscore_spellings(operation_id)
        return read and operation_id != "updateInvite"


@overrides(
    "location-name-kept-as-text",
    "INV-LOCATION-BY-NAME",
    "a location given by name is kept as text and the invitation refers to no location",
)
class _LocationNameKeptAsText(InvitePolicy):
    def location_by_name(self, uuid: str, text: str) -> tuple[str | None, str | None]:
        return None, text


@overrides(
    "watchlist-denial-keeps-status",
    "VISIT-DENIED-ON-WATCHLIST",
    "an update refused with 451 leaves the visit in its pre-arrival status with its credential",
)
class _DenialKeepsStatus(InvitePolicy):
    def denial_ends_visit(self, status: str) -> bool:
        return False


@overrides(
    "visitor-credential-from-now",
    "VISIT-CREDENTIAL-WINDOW",
    "the visitor credential becomes valid at creation instead of at the activation",
)
class _CredentialFromNow(InvitePolicy):
    def credential_activation(self, visit: Mapping[str, Any]) -> str | None:
        return format_instant(self.server.clock.now())


@overrides(
    "disabled-watchlists-consulted",
    "VISIT-WATCHLIST-CONSULTED",
    "disabled watchlists refuse visitors as enabled ones do",
)
class _DisabledWatchlistsConsulted(VisitPolicy):
    def consults_enabled_watchlists_only(self) -> bool:
        return False
