"""Faults of persons and users."""

from reference_server.faults._model import NOT_FOUND, fault, optional, swap, unchecked

fault(
    "person-put-keeps-omitted",
    "PERS-PUT-FULL-REPLACEMENT",
    "person PUT keeps the stored value of every field the body leaves out",
)
fault(
    "person-duplicate-allowed",
    "PERS-DUPLICATE",
    "persons may share a non-empty identityNumber or staffIdNumber",
)
fault(
    "person-reference-unchecked",
    "PERS-FIELD-REFERENCE",
    "person references to records that do not exist are stored without a 422",
)
fault(
    "search-returns-identity-number",
    "PERS-SEARCH-IDENTITY-NOT-RETURNED",
    "person search rows carry the identity number",
)
fault("search-case-sensitive", "PERS-SEARCH-CONTAINS", "person search respects letter case")
fault(
    "search-any-criterion",
    "PERS-SEARCH-ALL-FIELDS",
    "person search returns persons matching any one of the criteria",
)
fault(
    "user-password-returned",
    "USER-PASSWORD-NEVER-RETURNED",
    "a user read shows the stored password hash",
)
fault(
    "user-put-keeps-role",
    "USER-PUT-ROLE-RESET",
    "user PUT without role keeps the previous role instead of the default one",
)
fault(
    "user-delete-keeps-invites",
    "USER-DELETE-CANCELS-INVITES",
    "deleting a user leaves the invitations it hosts active",
)
fault(
    "user-enable-twice-accepted",
    "USER-ENABLE-DISABLE-CONFLICT",
    "enabling an enabled user (or disabling a disabled one) answers 200",
)
fault(
    "user-search-unknown-criterion-applied",
    "USER-SEARCH-UNKNOWN-FIELD",
    "user search filters on the unrecognised criterion mobile instead of ignoring it",
)
unchecked(
    "person-first-name-unchecked", "PERS-FIELD-LENGTH", "firstName", "createPerson", "updatePerson"
)
unchecked("person-type-unchecked", "PERS-FIELD-ENUM", "personType", "createPerson", "updatePerson")
unchecked(
    "person-birth-date-unchecked", "PERS-FIELD-DATE", "dateOfBirth", "createPerson", "updatePerson"
)
unchecked("person-email-unchecked", "PERS-FIELD-EMAIL", "email", "createPerson", "updatePerson")
unchecked("person-mobile-unchecked", "PERS-FIELD-PHONE", "mobile", "createPerson", "updatePerson")
unchecked("user-first-name-unchecked", "USER-FIELD-LENGTH", "firstName", "createUser", "updateUser")
unchecked("user-email-unchecked", "USER-FIELD-EMAIL", "email", "createUser", "updateUser")
unchecked("user-mobile-unchecked", "USER-FIELD-PHONE", "mobile", "createUser", "updateUser")
swap("person-unknown-400", "PERS-NOT-FOUND", NOT_FOUND, "getPerson", "updatePerson", "deletePerson")
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

# -- persons: required field, photo, read, delete cascade ----------------------------------
fault(
    "person-last-name-required",
    "PERS-FIELD-REQUIRED",
    "a person body without lastName is refused with 422, although firstName alone suffices",
)
fault(
    "person-bad-photo-ignored",
    "PERS-PHOTO-UUID-INVALID",
    "a person write with a photoUuid never issued (or expired) is stored without the photo",
)
fault(
    "person-put-ignores-photo",
    "PERS-PHOTO-ATTACH",
    "person PUT ignores photoUuid, so the photo is never attached",
)
fault(
    "person-has-photo-from-body",
    "PERS-HAS-PHOTO-READ-ONLY",
    "hasPhoto sent in a person body is stored and read back",
)
fault(
    "person-read-drops-cost-center",
    "PERS-GET-FULL-RECORD",
    "a person read shows costCenter as null whatever was stored",
)
unchecked(
    "person-address-city-unchecked",
    "PERS-ADDRESS-FIELD-NAMES",
    "homeAddressCity",
    "createPerson",
    "updatePerson",
)
fault(
    "person-delete-keeps-record",
    "PERS-DELETE-HARD",
    "person DELETE answers 200 and unlinks the credentials but keeps the record",
)
fault(
    "person-delete-marks-credentials-deleted",
    "PERS-DELETE-UNLINKS-CREDENTIALS",
    "deleting a person marks the credentials it held DELETED",
)
fault(
    "person-delete-soft",
    "PERS-DELETE-PHONEBOOK",
    "person DELETE only hides the record (404, not searched); its credentials stay linked, so "
    "device phonebooks keep listing the person",
)
fault(
    "person-delete-keeps-qr-code",
    "PERS-DELETE-QR-CODE",
    "deleting a person leaves its QR code credentials issued in its name",
)
fault(
    "person-search-total-counts-page",
    "PERS-SEARCH-RESPONSE",
    "person search totalCount counts the returned page instead of every match",
)
swap("person-search-missing-body-422", "PERS-SEARCH-BODY-REQUIRED", (400, 422), "searchPersons")
unchecked("person-search-start-unchecked", "PERS-SEARCH-PAGING", "start", "searchPersons")
unchecked("person-search-email-unchecked", "PERS-SEARCH-CRITERIA-LENGTH", "email", "searchPersons")

# -- users: body, role, username, photo, read, search, lifecycle, hosted views --------------
optional("user-email-optional", "USER-FIELD-REQUIRED", "email", "createUser", "updateUser")
fault(
    "user-reference-unchecked",
    "USER-FIELD-REFERENCE",
    "user location, group, organisation and department are stored without checking they exist",
)
fault("user-role-unchecked", "USER-ROLE-UNKNOWN", "a user role that does not exist is stored")
fault(
    "user-default-role-unset",
    "USER-ROLE-DEFAULT",
    "a user created without role reads role null instead of the default role",
)
fault(
    "user-username-not-generated",
    "USER-USERNAME-GENERATED",
    "a user created without username reads username null",
)
unchecked("user-password-unchecked", "USER-PASSWORD-POLICY", "password", "createUser", "updateUser")
fault(
    "user-create-ignores-photo",
    "USER-PHOTO-ATTACH",
    "user create ignores photoUuid, so the photo is never attached",
)
fault(
    "user-duplicate-username-allowed",
    "USER-DUPLICATE",
    "two users of a system may share a username (only the e-mail is unique)",
)
fault(
    "user-cost-center-checked",
    "USER-NO-COST-CENTER",
    "a costCenter sent on a user is checked like a reference: one pointing at nothing is "
    "refused with 422",
)
fault(
    "user-read-drops-department",
    "USER-GET-FULL-RECORD",
    "a user read shows department as null whatever was stored",
)
swap("user-search-missing-body-422", "USER-SEARCH-BODY-REQUIRED", (400, 422), "searchUsers")
unchecked("user-search-limit-unchecked", "USER-SEARCH-PAGING", "limit", "searchUsers")
unchecked(
    "user-search-last-name-unchecked", "USER-SEARCH-CRITERIA-LENGTH", "lastName", "searchUsers"
)
fault(
    "user-search-prefix-only",
    "USER-SEARCH-CONTAINS",
    "user search matches criteria only at the start of the field",
)
fault(
    "user-search-rows-carry-username",
    "USER-SEARCH-RESPONSE",
    "user search rows carry the username beside the five documented fields",
)
fault(
    "user-list-ignores-identity-nr",
    "USER-LIST-DEPRECATED",
    "the deprecated user list ignores its identity_nr parameter",
)
fault(
    "user-put-keeps-omitted",
    "USER-PUT-FULL-REPLACEMENT",
    "user PUT keeps the stored value of every optional field the body leaves out",
)
fault(
    "user-put-keeps-username",
    "USER-PUT-USERNAME-REGENERATED",
    "user PUT without username keeps the previous username",
)
fault(
    "user-delete-disables-only",
    "USER-DELETE-HARD",
    "user DELETE answers 200 but only disables the account",
)
fault(
    "user-delete-keeps-holder",
    "USER-DELETE-UNLINKS-CREDENTIALS",
    "credentials of a deleted user keep naming it as holder",
)
fault(
    "user-delete-keeps-qr-code",
    "USER-DELETE-QR-CODE",
    "deleting a user leaves its QR code credentials issued in its name",
)
fault(
    "user-disable-suspends-credentials",
    "USER-DISABLE",
    "disabling a user also disables every credential it holds",
)
fault("user-enable-ignored", "USER-ENABLE", "user enable answers 200 but leaves the user disabled")
fault(
    "user-invites-window-30-days-back",
    "USER-INVITES-WINDOW",
    "a user's invitations are listed from 30 days back instead of 62",
)
fault(
    "user-invite-entry-no-text-message",
    "USER-INVITES-ENTRY-FIELDS",
    "hosted invitation entries carry inviteTextMessage null",
)
fault(
    "user-registrations-ignore-start",
    "USER-REGISTRATIONS-PAGING",
    "a user's registrations always page from the first one, whatever start says",
)
fault(
    "user-registrations-unknown-status-empty",
    "USER-REGISTRATIONS-STATUS",
    "an unrecognised registration status lists nothing instead of everything",
)
fault(
    "persons-listed-wholesale",
    "PERS-NO-LIST-ALL",
    "GET /persons answers every person of the system",
)
fault(
    "onboarding-message-not-sent",
    "USER-ONBOARDING-MESSAGE",
    "sendOnBoardingMessage true sends no welcome e-mail",
)
