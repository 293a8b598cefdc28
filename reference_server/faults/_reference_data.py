"""Faults of the name-only resources, locations, roles, vehicles and access control."""

from reference_server.faults._model import DUPLICATE, NOT_FOUND, fault, swap, unchecked

unchecked(
    "department-name-unchecked", "DEPT-FIELD-LENGTH", "name", "createDepartment", "updateDepartment"
)
fault("duplicate-names-allowed", "DEPT-NAME-UNIQUE", "name-only resources accept duplicate names")
fault("department-delete-keeps-links", "DEPT-DELETE-UNLINKS", "people keep a deleted department")
fault(
    "location-put-replaces", "LOC-UPDATE-PARTIAL", "location PUT clears the fields it was not given"
)
fault("admin-role-deletable", "ROLE-DELETE-ADMINISTRATOR", "the administrator role can be deleted")
fault("role-refusal-http-status", "ROLE-DELETE-HAS-ACCOUNTS", "a 412 refusal uses the HTTP status")
fault("plates-keep-spaces", "VEH-PLATE-VIN-NORMALISED", "vehicle plates and VINs keep their spaces")
fault("trigger-no-audit", "ACP-TRIGGER-AUDIT", "the trigger writes no audit event")
fault("trigger-fires-twice", "ACP-TRIGGER-ONCE", "the trigger fires the relay twice")
unchecked(
    "organisation-name-unchecked",
    "ORG-FIELD-LENGTH",
    "name",
    "createOrganisation",
    "updateOrganisation",
)
unchecked(
    "cost-center-name-unchecked",
    "COSTC-FIELD-LENGTH",
    "name",
    "createCostCenter",
    "updateCostCenter",
)
unchecked(
    "visit-reason-name-unchecked",
    "VREASON-FIELD-LENGTH",
    "name",
    "createVisitReason",
    "updateVisitReason",
)
unchecked("group-name-unchecked", "GRP-FIELD-LENGTH", "name", "createGroup", "updateGroup")
unchecked("role-name-unchecked", "ROLE-FIELD-LENGTH", "name", "createRole", "updateRole")
unchecked("location-name-unchecked", "LOC-FIELD-LENGTH", "name", "createLocation", "updateLocation")
unchecked("location-type-unchecked", "LOC-FIELD-ENUM", "type", "createLocation", "updateLocation")
unchecked(
    "location-phone-unchecked",
    "LOC-FIELD-PHONE",
    "keyContactNumber",
    "createLocation",
    "updateLocation",
)
unchecked("latitude-unchecked", "LOC-FIELD-RANGE", "latitude", "createLocation", "updateLocation")
swap(
    "department-unknown-400",
    "DEPT-NOT-FOUND",
    NOT_FOUND,
    "getDepartment",
    "updateDepartment",
    "deleteDepartment",
)
swap(
    "organisation-unknown-400",
    "ORG-NOT-FOUND",
    NOT_FOUND,
    "getOrganisation",
    "updateOrganisation",
    "deleteOrganisation",
)
swap(
    "cost-center-unknown-400",
    "COSTC-NOT-FOUND",
    NOT_FOUND,
    "getCostCenter",
    "updateCostCenter",
    "deleteCostCenter",
)
swap(
    "visit-reason-unknown-400",
    "VREASON-NOT-FOUND",
    NOT_FOUND,
    "getVisitReason",
    "updateVisitReason",
    "deleteVisitReason",
)
swap("group-unknown-400", "GRP-NOT-FOUND", NOT_FOUND, "getGroup", "updateGroup", "deleteGroup")
swap(
    "location-unknown-400",
    "LOC-NOT-FOUND",
    NOT_FOUND,
    "getLocation",
    "updateLocation",
    "deleteLocation",
)
swap("role-unknown-400", "ROLE-NOT-FOUND", NOT_FOUND, "getRole", "updateRole", "deleteRole")
swap("point-unknown-400", "ACP-TRIGGER-NOT-FOUND", NOT_FOUND, "triggerAccessControlPoint")
swap(
    "organisation-duplicate-422",
    "ORG-NAME-UNIQUE",
    DUPLICATE,
    "createOrganisation",
    "updateOrganisation",
)
swap(
    "cost-center-duplicate-422",
    "COSTC-NAME-UNIQUE",
    DUPLICATE,
    "createCostCenter",
    "updateCostCenter",
)
swap(
    "visit-reason-duplicate-422",
    "VREASON-NAME-UNIQUE",
    DUPLICATE,
    "createVisitReason",
    "updateVisitReason",
)
swap("group-duplicate-422", "GRP-NAME-UNIQUE", DUPLICATE, "createGroup", "updateGroup")
swap("location-duplicate-422", "LOC-NAME-UNIQUE", DUPLICATE, "createLocation", "updateLocation")
swap("role-duplicate-422", "ROLE-NAME-UNIQUE", DUPLICATE, "createRole", "updateRole")
