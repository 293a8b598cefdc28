"""The embedded target's quotas the planner assumes before the server starts are the ones it
declares once started (fixtures/profiles/embedded.yaml against the served profile)."""

from __future__ import annotations

from amws_conformance.harness.plan.schedule import declared_buckets, embedded_shape
from amws_conformance.harness.target.profile import Profile
from amws_conformance.reference_server import bootstrap, build_server


def test_the_embedded_shape_declares_the_buckets_the_served_profile_declares() -> None:
    server = build_server(":memory:", ())
    served = Profile(data=bootstrap.profile(server, "http://127.0.0.1:1"), source="served")
    assert declared_buckets(embedded_shape()) == declared_buckets(served)
    # Raised quotas where the planner counts on them, the documented bucket where tests drain.
    assert served.bucket("full")["capacity"] > 100 * served.bucket("rate_limit")["capacity"]
