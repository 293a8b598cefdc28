"""Faults of users.

The faults of decisions inside a user step override one decision of ``UserPolicy`` each (the
policy seam, ``reference_server/_policy.py``): the correct answer comes from ``super()`` and
the class states only the deviation. Validation and status faults stay declarative
(``unchecked``, ``optional``, ``swap``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from amws_conformance.reference_server.domain.users import FIELDS as USER_FIELDS
from amws_conformance.reference_server.domain.users import REGISTRATION_FILTERS, UserPolicy
from amws_conformance.reference_server.faults._model import (
    NOT_FOUND,
    optional,
    overrides,
    swap,
    unchecked,
)
from amws_conformance.reference_server.store import Record


@overrides(
    "user-password-returned",
    "USER-PASSWORD-NEVER-RETURNED",
    "a user read shows the stored password hash",
)
class _PasswordReturned(UserPolicy):
    def read_fields(self, record: Record) -> dict[str, Any]:
        return {**super().read_fields(record), "password": record.get("_password") or ""}


@overrides(
    "user-put-keeps-role",
    "USER-PUT-ROLE-RESET",
    "user PUT without role keeps the previous role instead of the default one",
)
class _PutKeepsRole(UserPolicy):
    def role_when_omitted(self, system: str, current: Record | None) -> str | None:
        role = super().role_when_omitted(system, current)
        return role if current is None else current.get("role")


@overrides(
    "user-delete-keeps-invites",
    "USER-DELETE-CANCELS-INVITES",
    "deleting a user leaves the invitations it hosts active",
)
class _DeleteKeepsInvites(UserPolicy):
    def cancels_hosted_invites(self) -> bool:
        return False


@overrides(
    "user-enable-twice-accepted",
    "USER-ENABLE-DISABLE-CONFLICT",
    "enabling an enabled user (or disabling a disabled one) answers 200",
)
class _EnableTwiceAccepted(UserPolicy):
    def refuses_unchanged_enabled(self) -> bool:
        return False


@overrides(
    "user-search-unknown-criterion-applied",
    "USER-SEARCH-UNKNOWN-FIELD",
    "user search filters on the unrecognised criterion mobile instead of ignoring it",
)
class _SearchAppliesMobile(UserPolicy):
    def search_criteria(self) -> dict[str, str]:
        return {**super().search_criteria(), "mobile": "mobile"}


unchecked("user-first-name-unchecked", "USER-FIELD-LENGTH", "firstName", "createUser", "updateUser")
unchecked("user-email-unchecked", "USER-FIELD-EMAIL", "email", "createUser", "updateUser")
unchecked("user-mobile-unchecked", "USER-FIELD-PHONE", "mobile", "createUser", "updateUser")
swap(
    "user-unknown-400",
    "USER-NOT-FOUND",
    NOT_FOUND,
    "getUser",
    "updateUser",
    "deleteUser",
    "enableUser",
    "disableUser",
)
optional("user-email-optional", "USER-FIELD-REQUIRED", "email", "createUser", "updateUser")


@overrides(
    "user-reference-unchecked",
    "USER-FIELD-REFERENCE",
    "user location, group, organisation and department are stored without checking they exist",
)
class _ReferencesUnchecked(UserPolicy):
    def references_checked(self) -> dict[str, str]:
        unchecked = ("location", "group", "organisation", "department")
        return {k: v for k, v in super().references_checked().items() if k not in unchecked}


@overrides("user-role-unchecked", "USER-ROLE-UNKNOWN", "a user role that does not exist is stored")
class _RoleUnchecked(UserPolicy):
    def references_checked(self) -> dict[str, str]:
        checked = super().references_checked()
        checked.pop("role", None)
        return checked


@overrides(
    "user-default-role-unset",
    "USER-ROLE-DEFAULT",
    "a user created without role reads role null instead of the default role",
)
class _DefaultRoleUnset(UserPolicy):
    def role_when_omitted(self, system: str, current: Record | None) -> str | None:
        role = super().role_when_omitted(system, current)
        return None if current is None else role


@overrides(
    "user-username-not-generated",
    "USER-USERNAME-GENERATED",
    "a user created without username reads username null",
)
class _UsernameNotGenerated(UserPolicy):
    def username_when_omitted(self, current: Record | None) -> str | None:
        username = super().username_when_omitted(current)
        return None if current is None else username


unchecked("user-password-unchecked", "USER-PASSWORD-POLICY", "password", "createUser", "updateUser")


@overrides(
    "user-create-ignores-photo",
    "USER-PHOTO-ATTACH",
    "user create ignores photoUuid, so the photo is never attached",
)
class _CreateIgnoresPhoto(UserPolicy):
    def attaches_photo_on_create(self) -> bool:
        return False


@overrides(
    "user-duplicate-username-allowed",
    "USER-DUPLICATE",
    "two users of a system may share a username (only the e-mail is unique)",
)
class _DuplicateUsernameAllowed(UserPolicy):
    def unique_fields(self, data: Mapping[str, Any]) -> dict[str, Any]:
        unique = super().unique_fields(data)
        unique.pop("username", None)
        return unique


@overrides(
    "user-cost-center-checked",
    "USER-NO-COST-CENTER",
    "a costCenter sent on a user is checked like a reference: one pointing at nothing is "
    "refused with 422",
)
class _CostCenterChecked(UserPolicy):
    def references_checked(self) -> dict[str, str]:
        # Users carry no cost center; the fault checks one like a reference all the same.
        return {**super().references_checked(), "costCenter": "cost_center"}


@overrides(
    "user-read-drops-department",
    "USER-GET-FULL-RECORD",
    "a user read shows department as null whatever was stored",
)
class _ReadDropsDepartment(UserPolicy):
    def read_fields(self, record: Record) -> dict[str, Any]:
        return {**super().read_fields(record), "department": None}


swap("user-search-missing-body-422", "USER-SEARCH-BODY-REQUIRED", (400, 422), "searchUsers")
unchecked("user-search-limit-unchecked", "USER-SEARCH-PAGING", "limit", "searchUsers")
unchecked(
    "user-search-last-name-unchecked", "USER-SEARCH-CRITERIA-LENGTH", "lastName", "searchUsers"
)


@overrides(
    "user-search-prefix-only",
    "USER-SEARCH-CONTAINS",
    "user search matches criteria only at the start of the field",
)
class _SearchPrefixOnly(UserPolicy):
    def search_matches_anywhere(self) -> bool:
        return False


@overrides(
    "user-search-rows-carry-username",
    "USER-SEARCH-RESPONSE",
    "user search rows carry the username beside the five documented fields",
)
class _SearchRowsCarryUsername(UserPolicy):
    def search_row_extra(self) -> tuple[str, ...]:
        return (*super().search_row_extra(), "username")


@overrides(
    "user-list-ignores-identity-nr",
    "USER-LIST-DEPRECATED",
    "the deprecated user list ignores its identity_nr parameter",
)
class _ListIgnoresIdentityNr(UserPolicy):
    def list_parameters(self) -> dict[str, str]:
        parameters = super().list_parameters()
        parameters.pop("identity_nr", None)
        return parameters


@overrides(
    "user-put-keeps-omitted",
    "USER-PUT-FULL-REPLACEMENT",
    "user PUT keeps the stored value of every optional field the body leaves out",
)
class _PutKeepsOmitted(UserPolicy):
    def written_fields(self, body: dict[str, Any], current: Record | None) -> dict[str, Any]:
        data = super().written_fields(body, current)
        if current is not None:
            kept = [f for f in USER_FIELDS if f not in ("username", "role", "enabled")]
            data.update({f: body.get(f, current.get(f)) for f in kept})
        return data


@overrides(
    "user-put-keeps-username",
    "USER-PUT-USERNAME-REGENERATED",
    "user PUT without username keeps the previous username",
)
class _PutKeepsUsername(UserPolicy):
    def username_when_omitted(self, current: Record | None) -> str | None:
        username = super().username_when_omitted(current)
        return username if current is None else current.get("username")


@overrides(
    "user-delete-disables-only",
    "USER-DELETE-HARD",
    "user DELETE answers 200 but only disables the account",
)
class _DeleteDisablesOnly(UserPolicy):
    def keeps_deleted_account(self) -> bool:
        return True


@overrides(
    "user-delete-keeps-holder",
    "USER-DELETE-UNLINKS-CREDENTIALS",
    "credentials of a deleted user keep naming it as holder",
)
class _DeleteKeepsHolder(UserPolicy):
    def keeps_holder_on_delete(self, credential: Record) -> bool:
        return True


@overrides(
    "user-delete-keeps-qr-code",
    "USER-DELETE-QR-CODE",
    "deleting a user leaves its QR code credentials issued in its name",
)
class _DeleteKeepsQrCode(UserPolicy):
    def keeps_holder_on_delete(self, credential: Record) -> bool:
        is_qr_code = credential.get("readerType") == "QR_CODE"
        return is_qr_code or super().keeps_holder_on_delete(credential)


@overrides(
    "user-disable-suspends-credentials",
    "USER-DISABLE",
    "disabling a user also disables every credential it holds",
)
class _DisableSuspendsCredentials(UserPolicy):
    def disabled(self, system: str, user_uuid: str) -> None:
        super().disabled(system, user_uuid)
        store = self.server.store
        for held in store.all("credential", system, lambda r: r.get("holderUuid") == user_uuid):
            store.replace("credential", held["uuid"], {**held, "enabled": False})


@overrides(
    "user-enable-ignored", "USER-ENABLE", "user enable answers 200 but leaves the user disabled"
)
class _EnableIgnored(UserPolicy):
    def writes_enabled(self, enabled: bool) -> bool:
        return not enabled and super().writes_enabled(enabled)


@overrides(
    "user-invites-window-30-days-back",
    "USER-INVITES-WINDOW",
    "a user's invitations are listed from 30 days back instead of 62",
)
class _InvitesWindow30Days(UserPolicy):
    def invites_window_back(self) -> timedelta:
        return timedelta(days=30)


@overrides(
    "user-invite-entry-no-text-message",
    "USER-INVITES-ENTRY-FIELDS",
    "hosted invitation entries carry inviteTextMessage null",
)
class _InviteEntryNoTextMessage(UserPolicy):
    def invite_list_entry(self, invite: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().invite_list_entry(invite), "inviteTextMessage": None}


@overrides(
    "user-registrations-ignore-start",
    "USER-REGISTRATIONS-PAGING",
    "a user's registrations always page from the first one, whatever start says",
)
class _RegistrationsIgnoreStart(UserPolicy):
    def registrations_start(self, start: int) -> int:
        return 0


@overrides(
    "user-registrations-unknown-status-empty",
    "USER-REGISTRATIONS-STATUS",
    "an unrecognised registration status lists nothing instead of everything",
)
class _UnknownStatusListsNothing(UserPolicy):
    def registration_filter(self, status: str) -> str | None:
        if status not in (*REGISTRATION_FILTERS, "ALL"):
            return status
        return super().registration_filter(status)


@overrides(
    "onboarding-message-not-sent",
    "USER-ONBOARDING-MESSAGE",
    "sendOnBoardingMessage true sends no welcome e-mail",
)
class _OnboardingNotSent(UserPolicy):
    def sends_onboarding_message(self) -> bool:
        return False


swap(
    "deprecated-users-list-withdrawn", "VER-USERS-GET-DEPRECATED", (200, 404), "listUsersDeprecated"
)
