"""Profiles: interpolation, validation, and one-line errors that name the field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from amws_conformance.harness import ProfileError, load

MINIMAL = {"name": "t", "base_url": "https://example.test", "keys": {"full": "x" * 64}}


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_minimal_profile_loads_with_documented_bucket(tmp_path: Path) -> None:
    profile = load(_write(tmp_path, MINIMAL))
    assert profile.key("full") == "x" * 64
    assert profile.key("readonly") is None
    assert profile.bucket("full") == {"capacity": 2000, "refill_per_minute": 800}


def test_environment_values_are_interpolated(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AMWS_TEST_KEY", "k" * 64)
    profile = load(_write(tmp_path, {**MINIMAL, "keys": {"full": "${AMWS_TEST_KEY}"}}))
    assert profile.key("full") == "k" * 64


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({**MINIMAL, "keys": {"readonly": "r" * 64}}, "keys.full"),
        # A key is a header value of 64 to 256 characters (spec/openapi.yaml x-value-length).
        ({**MINIMAL, "keys": {"full": "k" * 10}}, "keys.full"),
        ({**MINIMAL, "keys": {"full": "k" * 64, "none": "k" * 257}}, "keys.none"),
        ({**MINIMAL, "base_url": "https://example.test/api/ws/v1/"}, "base_url"),
        ({**MINIMAL, "base_url": "ftp:/nowhere"}, "base_url"),
        ({**MINIMAL, "colour": "red"}, "colour"),
        (
            {
                **MINIMAL,
                "keys": {
                    "full": "f" * 64,
                    "encrypted": {"key": "e" * 64, "secret": "zz", "iv": "00"},
                },
            },
            "keys.encrypted",
        ),
        (
            {
                **MINIMAL,
                "rate_limits": {"per_key": {"nobody": {"capacity": 1, "refill_per_minute": 1}}},
            },
            "rate_limits.per_key",
        ),
    ],
)
def test_invalid_profile_error_is_one_line_naming_the_field(
    tmp_path: Path, data: dict, field: str
) -> None:
    with pytest.raises(ProfileError) as error:
        load(_write(tmp_path, data))
    message = str(error.value)
    assert "\n" not in message
    assert field in message


@pytest.mark.parametrize("padded", [" ", "\t", "\n"], ids=["space", "tab", "newline"])
@pytest.mark.parametrize("where", ["start", "end"])
def test_a_key_with_white_space_around_it_is_named_and_never_shown(
    tmp_path: Path, padded: str, where: str
) -> None:
    secret = "S3cr3t" + "k" * 60
    value = padded + secret if where == "start" else secret + padded
    keys = {"full": "f" * 64, "readonly": value}
    with pytest.raises(ProfileError) as error:
        load(_write(tmp_path, {**MINIMAL, "keys": keys}))
    message = str(error.value)
    assert "keys.readonly" in message and "white space" in message
    assert "S3cr3t" not in message and "base_url" not in message


@pytest.mark.parametrize("inner", ["\n", "\r", "\x01", "\u00e9"])
def test_a_key_no_header_can_carry_is_named_and_never_shown(tmp_path: Path, inner: str) -> None:
    secret = "S3cr3t" + "k" * 30 + inner + "k" * 30
    with pytest.raises(ProfileError) as error:
        load(_write(tmp_path, {**MINIMAL, "keys": {"full": secret}}))
    message = str(error.value)
    assert "keys.full" in message and "S3cr3t" not in message


def test_unset_environment_variable_names_the_field(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("AMWS_TEST_UNSET", raising=False)
    with pytest.raises(ProfileError, match=r"keys\.full.*AMWS_TEST_UNSET"):
        load(_write(tmp_path, {**MINIMAL, "keys": {"full": "${AMWS_TEST_UNSET}"}}))


def test_unreadable_yaml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="not valid YAML at line"):
        load(_write(tmp_path, "name: [unclosed\n"))
    with pytest.raises(ProfileError, match="cannot read"):
        load(tmp_path / "absent.yaml")


def test_secrets_cover_keys_and_tokens_but_not_addresses(tmp_path: Path) -> None:
    data = {**MINIMAL, "control": {"url": "http://127.0.0.1:1/_reference", "token": "t" * 20}}
    secrets = load(_write(tmp_path, data)).secrets()
    assert "x" * 64 in secrets and "t" * 20 in secrets
    assert "https://example.test" not in secrets


def test_shipped_example_profiles_are_valid(monkeypatch) -> None:
    folder = Path(__file__).resolve().parents[3] / "amws_conformance" / "fixtures" / "profiles"
    for name in (
        "AMWS_KEY_FULL",
        "AMWS_KEY_READONLY",
        "AMWS_KEY_NONE",
        "AMWS_KEY_DISABLED",
        "AMWS_KEY_OTHER",
        "AMWS_KEY_RATE",
    ):
        monkeypatch.setenv(name, "v" * 64)
    for path in sorted(folder.glob("*.yaml")):
        assert load(path).name


def test_a_failing_test_that_takes_the_profile_prints_no_key(pytester: pytest.Pytester) -> None:
    """pytest prints a failing test's arguments; a profile (and the run's session, which holds
    the secrets for redaction) must print without the keys, not even a truncated prefix."""
    key = "K3y" * 30
    profile = pytester.path / "target.yaml"
    profile.write_text(yaml.safe_dump({**MINIMAL, "keys": {"full": key}}), encoding="utf-8")
    pytester.makepyfile(
        """
        from amws_conformance.harness import load
        from amws_conformance.harness.target.session import Session

        def test_fails(request):
            profile = load(request.config.getoption("profile_path"))
            session = Session("https://example.test", None, profile.secrets())
            assert (profile, session) is None
        """
    )
    pytester.makeconftest("def pytest_addoption(parser):\n    parser.addoption('--profile-path')\n")
    result = pytester.runpytest_inprocess(
        "-p", "no:harness.plugin", "-p", "no:cacheprovider", f"--profile-path={profile}"
    )
    result.assert_outcomes(failed=1)
    assert "K3yK3y" not in result.stdout.str()


def test_a_key_class_takes_a_pool_whose_first_key_names_the_class(tmp_path: Path) -> None:
    keys = {"full": ["a" * 64, "b" * 64, "c" * 64], "readonly": "r" * 64}
    profile = load(_write(tmp_path, {**MINIMAL, "keys": keys}))
    assert profile.pool("full") == ("a" * 64, "b" * 64, "c" * 64)
    assert profile.key("full") == "a" * 64
    assert profile.pool("readonly") == ("r" * 64,) and profile.pool("none") == ()
    assert {"a" * 64, "b" * 64, "c" * 64} <= set(profile.secrets())  # every key is redacted


@pytest.mark.parametrize(
    ("keys", "said"),
    [
        ({"full": ["a" * 64, "a" * 64]}, "profile field keys.full[1] repeats keys.full[0]"),
        ({"full": ["a" * 64, " " + "b" * 64]}, "profile field keys.full[1] has white space"),
        ({"full": ["a" * 64, "b" * 10]}, "profile field keys.full[1] is too short"),
        ({"full": "a" * 64, "readonly": []}, "profile field keys.readonly is an empty list"),
    ],
)
def test_a_bad_pool_is_refused_naming_the_key_never_showing_it(
    tmp_path: Path, keys: dict[str, object], said: str
) -> None:
    with pytest.raises(ProfileError) as error:
        load(_write(tmp_path, {**MINIMAL, "keys": keys}))
    assert said in str(error.value)
    assert "aaaaaaaa" not in str(error.value) and "bbbbbbbb" not in str(error.value)
