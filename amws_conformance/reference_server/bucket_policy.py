"""The decisions on a rate bucket's size: the policy seam the rate-limit faults bend.

Kept apart from ``rate_bucket`` (the bucket arithmetic), which the server's state and the API
key records need without the policy machinery.
"""

from __future__ import annotations

from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.rate_bucket import BucketSize


class BucketPolicy(Policy):
    """The decisions on the size of a bucket, each answering what is configured for it.

    ``configured`` is the size the key's record, the unauthenticated setting or the
    documented default gives the bucket (``Server._configured_bucket``).
    """

    def capacity(self, configured: BucketSize) -> int:
        """The units a full bucket holds: as configured."""
        return configured.capacity

    def refill_per_minute(self, configured: BucketSize) -> int:
        """The units a bucket regains a minute: as configured."""
        return configured.refill_per_minute

    def size(self, configured: BucketSize) -> BucketSize:
        """The bucket's size in force, from the two decisions above."""
        return BucketSize(self.capacity(configured), self.refill_per_minute(configured))
