"""harness/evidence/curl.py: a failure's deciding exchange as a curl command, secrets as
variables; one copied from report.html gets the recorded status from a served reference server."""

from __future__ import annotations

import html.parser
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import yaml

from amws_conformance.harness.evidence.curl import (
    command,
    secret_variables,
    used_variables,
    variable_name,
)
from tests._served import PACKAGE, ordinary_env, serve

KEY = "k" * 64


def test_variables_are_named_by_key_class_and_by_the_profile_where_it_names_one() -> None:
    assert variable_name(("keys", "full")) == "AMWS_KEY_FULL"
    assert variable_name(("keys", "encrypted", "key")) == "AMWS_KEY_ENCRYPTED"
    assert variable_name(("virtual_reader", "key")) == "AMWS_VIRTUAL_READER_KEY"
    data = {"base_url": "http://h:1", "keys": {"full": KEY, "readonly": "r" * 64}}
    raw = {"keys": {"full": "${MY_FULL}", "readonly": "r" * 64}}
    found = secret_variables(data, raw, frozenset({"base_url"}))
    assert found == {KEY: "MY_FULL", "r" * 64: "AMWS_KEY_READONLY"}


def test_each_key_of_a_pool_has_a_variable_of_its_own() -> None:
    pool = ["a" * 64, "b" * 64, "c" * 64]
    found = secret_variables({"keys": {"full": pool}}, {"keys": {"full": ["${K1}", "b" * 64]}})
    assert found == {"a" * 64: "K1", "b" * 64: "AMWS_KEY_FULL_2", "c" * 64: "AMWS_KEY_FULL_3"}


def test_a_command_holds_no_secret_and_sends_the_same_bytes() -> None:
    request = httpx.Request(
        "POST",
        "http://h:1/api/ws/v1/roles?x=it's",
        headers={"Authorization": KEY, "Content-Type": "application/json"},
        content=json.dumps({"name": "O'Brien", "note": KEY}).encode(),
    )
    curl = command(request, {KEY: "AMWS_KEY_FULL"})
    assert KEY not in curl
    assert used_variables(curl) == ["AMWS_KEY_FULL"]
    # The shell reads it back as the request's words, the key from the environment.
    echo = curl.replace("curl ", "printf '%s\\n' ", 1)
    words = subprocess.run(
        ["sh", "-c", echo], env={"AMWS_KEY_FULL": KEY}, capture_output=True, text=True
    ).stdout.splitlines()
    assert "http://h:1/api/ws/v1/roles?x=it's" in words
    assert f"authorization: {KEY}" in words
    assert json.loads(words[-1]) == {"name": "O'Brien", "note": KEY}


def test_bytes_no_shell_word_holds_are_piped_by_printf() -> None:
    request = httpx.Request("POST", "http://h:1/x", content=b"\x00\xff{")
    curl = command(request, {})
    assert curl.startswith("printf '\\000\\377\\173' | curl ") and "--data-binary @-" in curl
    sent = subprocess.run(["sh", "-c", curl.split(" | ")[0]], capture_output=True).stdout
    assert sent == b"\x00\xff{"


class _CurlBlocks(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in = tag == "pre" and ("class", "curl") in attrs
        if self._in:
            self.found.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in = False

    def handle_data(self, data: str) -> None:
        if self._in:
            self.found[-1] += data


def test_a_curl_command_from_report_html_gets_the_recorded_status(tmp_path: Path) -> None:
    server, profile = serve(tmp_path, faults=["bad-uuid-404"])
    test = "suites/rules/test_conventions.py::test_non_uuid_path_value_answers_422[deleteFile-uuid]"
    try:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "amws_conformance.harness.cli",
                "run",
                "--target",
                str(profile),
                "--conformance-report",
                str(tmp_path / "report"),
                "--",
                test,
                "-p",
                "no:cacheprovider",
            ],
            cwd=PACKAGE,
            env=ordinary_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 1, run.stdout[-3000:]
        report = json.loads((tmp_path / "report" / "report.json").read_text())
        recorded = report["failures"][test]["transcript"][-1]["status"]
        page = _CurlBlocks()
        page.feed((tmp_path / "report" / "report.html").read_text())
        assert page.found, "report.html shows no curl command"
        curl = page.found[0]
        keys = yaml.safe_load(profile.read_text())["keys"]
        assert keys["full"] not in curl and report["failures"][test]["curl"] == curl
        env = {**os.environ, "AMWS_KEY_FULL": keys["full"]}
        answer = subprocess.run(["sh", "-c", curl], env=env, capture_output=True, text=True)
        status = int(answer.stdout.split()[1])
        assert status == recorded == 404
    finally:
        server.terminate()
        server.wait(timeout=10)
