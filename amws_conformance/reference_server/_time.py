"""Instants on the wire: parsed with any offset, always written in UTC with milliseconds."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta


def parse_instant(text: str) -> datetime:
    """Parse an ISO 8601 instant; a value without an offset is read as UTC.

    Raises ``ValueError`` for anything that is not a real instant (month 13, hour 25 …).
    """
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    elif len(text) > 5 and text[-5] in "+-" and text[-4:].isdigit() and text[-3] != ":":
        text = f"{text[:-2]}:{text[-2:]}"  # +hhmm -> +hh:mm
    if "." in text:
        head, _, rest = text.partition(".")
        match = re.match(r"[0-9]*", rest)  # always matches, perhaps nothing
        digits = match.group() if match else ""
        text = head + "." + digits[:6].ljust(6, "0") + rest[len(digits) :]
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is in year 0, which no datetime holds
        raise ValueError(f"{text} lies outside the years 1 to 9999 in UTC") from None


def format_instant(value: datetime) -> str:
    """UTC, millisecond precision, ``Z`` suffix."""
    value = value.astimezone(UTC)
    # The year in four digits: strftime's %Y writes year 350 as "350" on some platforms.
    return (
        f"{value.year:04d}-"
        + value.strftime("%m-%dT%H:%M:%S.")
        + f"{value.microsecond // 1000:03d}Z"
    )


def normalise(text: str) -> str:
    """Canonical stored form of an incoming instant."""
    return format_instant(parse_instant(text))


def floor_minute(value: datetime) -> datetime:
    return value.replace(second=0, microsecond=0)


def ceil_minute_last_second(value: datetime) -> datetime:
    """The last whole second of the value's minute (09:00:10 -> 09:00:59.000)."""
    return value.replace(second=59, microsecond=0)


def seconds_until(later: datetime, now: datetime) -> int:
    return max(0, math.ceil((later - now).total_seconds()))


def days(n: float) -> timedelta:
    return timedelta(days=n)
