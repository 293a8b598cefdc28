"""A recorded exchange as a ready-to-run ``curl`` command, secrets written as variables.

A vendor fixing a failure wants the deciding request in a form they can send again, with no
key of the profile in it. Every secret the profile holds (the values :meth:`Profile.secrets`
redacts elsewhere) is written as a shell variable named after where it sits: ``keys.full`` is
``$AMWS_KEY_FULL``, ``keys.readonly`` ``$AMWS_KEY_READONLY``, ``keys.encrypted.key``
``$AMWS_KEY_ENCRYPTED``, ``virtual_reader.key`` ``$AMWS_VIRTUAL_READER_KEY``. Where the profile
itself reads a value from the environment (``${AMWS_KEY_OTHER}``), that variable's name is used,
so the variables a run needed are the ones its command needs.

The command sends the exact bytes the client sent (an encrypting key's fields encrypted as
sent), and ``-i`` prints the answer's status and headers, to hold against the recorded ones.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

import httpx
import yaml

from amws_conformance.harness.target.profile import _PUBLIC_FIELDS, Profile

# Headers curl writes itself, or that say nothing about the request's meaning.
_LEFT_OUT = frozenset(
    {"host", "content-length", "accept-encoding", "connection", "user-agent", "accept"}
)
_ENV = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
_NOT_NAME = re.compile(r"[^A-Za-z0-9]+")
MIN_SECRET = 8  # as Profile.secrets: shorter values are not taken for secrets


def variable_name(path: tuple[str, ...]) -> str:
    """The variable a profile value at ``path`` is written as (``("keys", "full")`` ->
    ``AMWS_KEY_FULL``; an encrypted key's ``key`` is the key itself)."""
    parts = list(path)
    if parts[:1] == ["keys"]:
        parts[0] = "key"
        if len(parts) == 3 and parts[2] == "key":
            parts = parts[:2]
    return "AMWS_" + _NOT_NAME.sub("_", "_".join(parts)).strip("_").upper()


def secret_variables(
    data: Mapping[str, Any],
    raw: Mapping[str, Any] | None = None,
    public: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """Each secret value of a loaded profile (``data``) and the variable that stands for it.
    ``raw``: the profile as written, before ``${NAME}`` was read, whose names win;
    ``public``: field names that hold no secret (addresses, identifiers)."""
    found: dict[str, str] = {}

    def walk(node: Any, as_written: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                written = as_written.get(key) if isinstance(as_written, Mapping) else None
                walk(value, written, (*path, str(key)))
        elif isinstance(node, list) and path:
            # A pool of keys: the first is the class's own variable, the next _2, _3 ...
            for index, item in enumerate(node):
                raw = as_written if isinstance(as_written, list) else []
                where = path if index == 0 else (*path[:-1], f"{path[-1]}_{index + 1}")
                walk(item, raw[index] if index < len(raw) else None, where)
        elif isinstance(node, str) and len(node) >= MIN_SECRET and path[-1:] != ():
            if path[-1] in public:
                return
            named = _ENV.match(as_written) if isinstance(as_written, str) else None
            found.setdefault(node, named.group(1) if named else variable_name(path))

    walk(data, raw, ())
    return found


def profile_variables(profile: Profile) -> dict[str, str]:
    """:func:`secret_variables` of a loaded profile, its file read again for ``${NAME}``s."""
    try:
        with open(profile.source, encoding="utf-8") as file:
            raw = yaml.safe_load(file)
    except (OSError, yaml.YAMLError):
        raw = None
    return secret_variables(profile.data, raw if isinstance(raw, dict) else None, _PUBLIC_FIELDS)


def _word(text: str, variables: Mapping[str, str]) -> str:
    """``text`` as one shell word, each secret in it written ``"$NAME"`` (expanded by the
    shell), the rest single-quoted."""
    secrets = sorted((s for s in variables if s and s in text), key=len, reverse=True)
    if not secrets:
        return shlex.quote(text)
    pattern = re.compile("|".join(re.escape(s) for s in secrets))
    pieces: list[str] = []
    at = 0
    for match in pattern.finditer(text):
        if match.start() > at:
            pieces.append(shlex.quote(text[at : match.start()]))
        pieces.append(f'"${{{variables[match.group(0)]}}}"')
        at = match.end()
    if at < len(text):
        pieces.append(shlex.quote(text[at:]))
    return "".join(pieces)


def _octal(data: bytes) -> str:
    """Bytes as a POSIX printf format that writes them back (octal escapes)."""
    return "".join(f"\\{b:03o}" for b in data)


def command(request: httpx.Request, variables: Mapping[str, str]) -> str:
    """A ``curl`` command that sends ``request`` again: same method, URL, headers and body."""
    words = ["curl", "-sS", "-i"]
    method = request.method.upper()
    words += ["--head"] if method == "HEAD" else ["-X", method]
    words.append(_word(str(request.url), variables))
    for name, value in request.headers.items():
        if name.lower() not in _LEFT_OUT:
            words += ["-H", _word(f"{name}: {value}", variables)]
    body = request.content if hasattr(request, "_content") else b""
    prefix = ""
    if body:
        try:
            text = body.decode("utf-8")
            if "\x00" in text:
                raise UnicodeDecodeError("utf-8", body, 0, 1, "NUL")
            words += ["--data-binary", _word(text, variables)]
        except UnicodeDecodeError:
            # Bytes a shell word cannot hold (a NUL, invalid UTF-8): written by printf.
            prefix = f"printf '{_octal(body)}' | "
            words += ["--data-binary", "@-"]
    return prefix + " ".join(words)


def used_variables(curl: str) -> list[str]:
    """The variables a command reads, in order of first use."""
    return list(dict.fromkeys(re.findall(r'"\$\{([A-Za-z_][A-Za-z0-9_]*)\}"', curl)))


def deciding(entry: Mapping[str, Any]) -> str | None:
    """The curl command of a failure's deciding exchange: the last one of its transcript."""
    transcript = [e for e in entry.get("transcript") or () if isinstance(e, Mapping)]
    if not transcript:
        return None
    curl = transcript[-1].get("curl")
    return str(curl) if curl else None
