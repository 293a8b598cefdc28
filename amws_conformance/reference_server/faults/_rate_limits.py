"""Faults of rate limits: the buckets, each operation's cost and the Retry-After advice.

Each fault overrides one decision of the request pipeline or the rate buckets
(``RequestPolicy``, ``BucketPolicy``; the policy seam, ``reference_server/_policy.py``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from amws_conformance import spec
from amws_conformance.reference_server._errors import ApiError
from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server.bucket_policy import BucketPolicy
from amws_conformance.reference_server.faults._model import overrides
from amws_conformance.reference_server.rate_bucket import DOCUMENTED, BucketSize

if TYPE_CHECKING:
    from amws_conformance.reference_server._api_key import ApiKey


@overrides("no-retry-after", "RATE-RETRY-AFTER-HEADER", "429 answers carry no Retry-After header")
class _NoRetryAfter(RequestPolicy):
    def retry_after(self, wait: int) -> dict[str, str]:
        return {}


@overrides(
    "bucket-never-refills", "RATE-REFILL-800-PER-MINUTE", "the bucket does not refill over time"
)
class _BucketNeverRefills(BucketPolicy):
    def refill_per_minute(self, configured: BucketSize) -> int:
        return 0


@overrides(
    "bucket-too-large", "RATE-BUCKET-2000", "documented buckets hold 4000 units instead of 2000"
)
class _BucketTooLarge(BucketPolicy):
    def capacity(self, configured: BucketSize) -> int:
        return 4000 if configured == DOCUMENTED else super().capacity(configured)


@overrides("failed-auth-free", "RATE-COST-FAILED-AUTH-400", "failed authentications charge nothing")
class _FailedAuthFree(RequestPolicy):
    def charge_failed_authentication(self, bucket: str) -> None:
        return None


@overrides(
    "reads-free", "RATE-COST-LIST-READ-DELETE-STATUS-30", "reads, lists and deletes charge nothing"
)
class _ReadsFree(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        units = super().cost(op)
        return 0 if units == 30 and op.rate_cost == 30 else units


_REFUSED_UNTIL = "system-wide-throttle"  # memory: system -> server-clock time it may retry


@overrides(
    "system-wide-throttle",
    "RATE-PER-KEY-BUCKET",
    "once one key is answered 429, every key of its system is refused until it may retry",
)
class _SystemWideThrottle(RequestPolicy):
    def charge_key(self, key: ApiKey, units: int) -> None:
        until, now = self.memory(_REFUSED_UNTIL), self.server.clock.timestamp()
        left = until.get(key.system, 0.0) - now
        if left > 0:
            wait = str(math.ceil(left))
            raise ApiError(429, "rate limit exhausted", headers={"Retry-After": wait})
        try:
            super().charge_key(key, units)
        except ApiError as error:
            if error.status == 429:
                wait_s = float(error.headers.get("Retry-After", "1"))
                until[key.system] = self.server.clock.timestamp() + wait_s
            raise


@overrides("invite-writes-cost-30", "RATE-COST-INVITE-WRITE-50", "invitation writes draw 30 units")
class _InviteWritesCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 30 if op.operation_id in ("createInvite", "updateInvite") else super().cost(op)


@overrides("photo-upload-cost-30", "RATE-COST-PHOTO-UPLOAD-50", "photo uploads draw 30 units")
class _PhotoUploadCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 30 if op.operation_id == "uploadFile" else super().cost(op)


@overrides(
    "photo-downloads-cost-30", "RATE-COST-PHOTO-DOWNLOAD-50", "photo downloads draw 30 units"
)
class _PhotoDownloadsCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        downloads = ("downloadPhoto", "downloadThumbnail")
        return 30 if op.operation_id in downloads else super().cost(op)


@overrides(
    "status-read-cost-30",
    "RATE-COST-STATUS-READ-FILE-DELETE-10",
    "invitation status reads and staged-file deletes draw 30 units",
)
class _StatusReadCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 30 if op.operation_id in ("getInviteStatus", "deleteFile") else super().cost(op)


@overrides(
    "credential-writes-cost-30",
    "RATE-COST-CREDENTIAL-WRITE-ABOVE-READ",
    "credential creates and updates draw 30 units, a read's cost",
)
class _CredentialWritesCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        writes = ("createCredential", "updateCredential")
        return 30 if op.operation_id in writes else super().cost(op)


@overrides(
    "trigger-cost-30", "RATE-COST-TRIGGER-ABOVE-READS", "a trigger draws 30 units, a read's cost"
)
class _TriggerCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 30 if op.operation_id == "triggerAccessControlPoint" else super().cost(op)


@overrides("trigger-cost-50", "RATE-COST-TRIGGER-100", "a trigger draws 50 units")
class _TriggerCost50(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 50 if op.operation_id == "triggerAccessControlPoint" else super().cost(op)


@overrides(
    "retry-after-one-second",
    "RATE-RETRY-AFTER-LOWER-BOUND",
    "429 answers always advise Retry-After: 1",
)
class _RetryAfterOneSecond(RequestPolicy):
    def retry_after(self, wait: int) -> dict[str, str]:
        return super().retry_after(1)
