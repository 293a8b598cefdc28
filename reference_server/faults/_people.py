"""Faults of persons and users."""

from reference_server.faults._model import NOT_FOUND, fault, swap, unchecked

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
