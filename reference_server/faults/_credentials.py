"""Faults of credentials and the controllers' credential stores."""

from reference_server.faults._model import (
    CATALOGUE,
    DUPLICATE,
    NOT_FOUND,
    Fault,
    fault,
    optional,
    swap,
    unchecked,
)

fault("credential-delete-hard", "CRED-DELETE-SOFT", "credential DELETE removes the record")
fault(
    "deleted-identifier-reusable",
    "CRED-IDENTIFIER-RESERVED",
    "a deleted credential's identifier can be issued again",
)
fault("acl-put-merges", "CRED-PUT-ACL-REPLACE", "credential PUT adds lists instead of replacing")
fault("valid-never-activates", "CRED-VALID-TO-ACTIVE", "a VALID credential stays VALID")
fault(
    "inactive-pushed-to-hardware",
    "CRED-HARDWARE-ACTIVE-ONLY",
    "controllers also hold VALID, EXPIRED and DISABLED credentials",
)
fault("holder-missing-422", "CRED-HOLDER-NOT-FOUND", "an unknown holder answers 422, not 404")
fault(
    "credential-put-clears-omitted",
    "CRED-PUT-PARTIAL",
    "credential PUT clears the window, useLimit and comments it was not given",
)
fault(
    "credential-never-expires", "CRED-ACTIVE-TO-EXPIRED", "a credential stays ACTIVE after expiry"
)
fault("reader-type-changeable", "CRED-PUT-READER-TYPE-IGNORED", "credential PUT changes readerType")
fault("by-user-hides-deleted", "CRED-BY-USER", "the by-user list leaves out DISABLED and DELETED")
fault("credential-type-not-derived", "CRED-TYPE-DERIVED", "every credential reads type PERSONNEL")
unchecked("reader-type-unchecked", "CRED-FIELD-ENUM", "readerType", "createCredential")
unchecked("pin-range-unchecked", "CRED-FIELD-RANGE", "pin", "createCredential")
unchecked(
    "identifier-length-unchecked", "CRED-FIELD-LENGTH", "uniqueIdentifier", "createCredential"
)
swap(
    "credential-unknown-400",
    "CRED-NOT-FOUND",
    NOT_FOUND,
    "getCredential",
    "updateCredential",
    "deleteCredential",
)
swap("identifier-duplicate-422", "CRED-IDENTIFIER-UNIQUE", DUPLICATE, "createCredential")
optional("reader-type-optional", "CRED-FIELD-REQUIRED", "readerType", "createCredential")
fault(
    "unknown-acl-ignored",
    "CRED-FIELD-REFERENCE",
    "unknown access control lists are dropped, not refused",
)
# The holder rule is the schema's body-level oneOf, so the validation seam skips body-level rules.
CATALOGUE["both-holders-accepted"] = Fault(
    "both-holders-accepted",
    "CRED-HOLDER-EXACTLY-ONE",
    "a create body naming a person and a user is accepted (the person holds the credential)",
    operations=("createCredential",),
    unchecked="body",
)
fault(
    "holder-names-frozen",
    "CRED-READ-SHAPE",
    "holderFirstName and holderLastName keep the names the holder had at issue",
)
fault("future-start-reads-active", "CRED-STATUS-DEFAULT", "a window not open yet reads ACTIVE")
fault(
    "credential-writes-not-pushed",
    "CRED-WRITE-PUSHED",
    "credential writes reach the controllers only when the clock next moves",
)
fault("put-use-limit-ignored", "CRED-USE-LIMIT", "a PUT's useLimit is not applied")
fault(
    "put-comments-appended", "CRED-PUT-FIELDS", "a PUT's comments are appended to the stored ones"
)
fault(
    "empty-acl-put-ignored", "CRED-PUT-ACL-EMPTY", "a PUT with an empty list array changes nothing"
)
fault("omitted-acl-put-clears", "CRED-PUT-ACL-OMITTED", "a PUT without lists removes every list")
fault(
    "disabled-kept-on-hardware",
    "CRED-PUT-STATUS-DISABLED",
    "DISABLED credentials stay on the controllers",
)
fault(
    "put-deleted-removes-record", "CRED-PUT-STATUS-DELETED", "a PUT with DELETED erases the record"
)
fault(
    "put-status-drops-window",
    "CRED-PUT-STATUS-OTHER",
    "a PUT carrying a status applies only the status (window and useLimit are dropped)",
)
fault(
    "deleted-kept-on-hardware",
    "CRED-DELETE-HARDWARE",
    "DELETED credentials stay on the controllers",
)
fault(
    "by-person-every-person",
    "CRED-BY-PERSON",
    "the by-person list holds every person-held credential of the system",
)
fault(
    "credentials-listed-wholesale",
    "CRED-NO-LIST-ALL",
    "GET /credentials answers every credential of the system",
)
unchecked(
    "acl-list-count-unchecked",
    "CRED-FIELD-ACL-COUNT",
    "accessControlListUuids",
    "createCredential",
    "updateCredential",
)
fault(
    "enabled-flag-ignored",
    "CRED-ENABLED-FLAG",
    "enabled false on create is dropped: the credential is stored live",
)
fault(
    "extended-credential-stays-expired",
    "CRED-EXPIRED-EXTEND-LEAVES-EXPIRED",
    "an EXPIRED credential given a later window by a PUT keeps reading EXPIRED",
)
