"""Faults of credentials and the controllers' credential stores."""

from reference_server.faults._model import DUPLICATE, NOT_FOUND, fault, swap, unchecked

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
