"""``amws-reference serve --throttle``: the figures of the throttles the documents leave open
(the virtual reader's per-device allowance and its failed device checks per address, the signed
links per address) are a deployment setting. The server enforces the figures it was given and
its written profile declares them, so the suites judge the throttle rules against them."""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path

import httpx
import pytest
import yaml

from amws_conformance import spec
from amws_conformance.reference_server.cli import _throttle_setting
from tests._served import serve
from tests.reference_server.conftest import LiveServer
from tests.reference_server.test_virtual_reader import (
    LIST,
    assert_outcome,
    list_body,
    reader_client,
)


def test_a_deployment_sets_its_own_throttle_figures_and_its_profile_declares_them() -> None:
    """``serve --throttle``: the documents give no figures, so a deployment may choose its
    own; the reference server then enforces them and writes them into its profile."""
    figures = {
        "reader-auth-failures-per-address": spec.Throttle(requests=8, window_seconds=30),
        "reader-per-device": spec.Throttle(requests=12, window_seconds=60),
    }
    with LiveServer(throttles=figures) as own:
        declared = own.profile["throttles"]
        assert declared["reader_failures"] == {"requests": 8, "window_seconds": 30.0}
        assert declared["reader_device"] == {"requests": 12, "window_seconds": 60.0}
        assert (
            declared["signed_links"]["requests"]
            == spec.throttle("signed-link-per-address").requests
        )
        wrong = {**list_body(own), "key": "w" * 32}
        with reader_client(own) as client:
            for _ in range(8):
                assert_outcome(client.post(LIST, json=wrong), 404)
            assert_outcome(client.post(LIST, json=wrong), 429)
    with LiveServer(throttles=figures) as own, reader_client(own) as client:
        for _ in range(12):
            assert client.post(LIST, json=list_body(own)).status_code == 200
        assert_outcome(client.post(LIST, json=list_body(own)), 429)


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        ("reader-per-device=300", True),
        ("reader-auth-failures-per-address=50/120", True),
        ("signed-link-per-address=0", False),
        ("no-such-throttle=5", False),
        ("reader-per-device=many", False),
    ],
)
def test_the_throttle_option_names_a_known_throttle_and_positive_figures(
    text: str, accepted: bool
) -> None:
    if accepted:
        name, throttle = _throttle_setting(text)
        assert name == text.split("=")[0] and throttle.requests > 0
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            _throttle_setting(text)


def test_serve_enforces_the_figures_given_on_its_command_line_and_declares_them(
    tmp_path: Path,
) -> None:
    """The option as a user types it: a served process, its profile file, plain HTTP."""
    options = ["--throttle", "reader-per-device=4", "--throttle"]
    options += ["reader-auth-failures-per-address=3/30"]
    process, written = serve(tmp_path, options=options)
    try:
        profile = yaml.safe_load(written.read_text())
        device_window = spec.throttle("reader-per-device").window_seconds
        assert profile["throttles"]["reader_device"] == {
            "requests": 4,
            "window_seconds": device_window,
        }
        assert profile["throttles"]["reader_failures"] == {"requests": 3, "window_seconds": 30}
        found = profile["virtual_reader"]
        body = {"uuid": found["uuid"], "key": found["key"]}
        with httpx.Client(base_url=profile["base_url"], timeout=10) as client:
            answers = [client.post(LIST, json=body).status_code for _ in range(5)]
            assert answers == [200] * 4 + [429]
            unknown = {**body, "uuid": str(uuid.uuid4())}
            answers = [client.post(LIST, json=unknown).status_code for _ in range(4)]
            assert answers == [404] * 3 + [429]
    finally:
        process.terminate()
        process.wait(timeout=10)
