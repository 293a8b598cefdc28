"""``amws-reference serve``: run the reference server and write its target profile.

``amws-reference spec [--enforced]`` writes the OpenAPI document: as documented, or as this
server enforces it (our ``x-assumed-schema`` overlays merged into their schemas).
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import uvicorn
import yaml

from amws_conformance import spec
from amws_conformance.reference_server import bootstrap, extensions
from amws_conformance.reference_server._http import uvicorn_options
from amws_conformance.reference_server._state import Server
from amws_conformance.reference_server.app import create_app
from amws_conformance.reference_server.faults import CATALOGUE, Faults
from amws_conformance.reference_server.faults._mutants import census
from amws_conformance.reference_server.rate_bucket import DOCUMENTED, RAISED
from amws_conformance.reference_server.store import Store

THROTTLE_NAMES = spec.throttle_names()


def _throttle_setting(text: str) -> tuple[str, spec.Throttle]:
    """``NAME=REQUESTS[/SECONDS]`` (seconds default to the spec's window of that throttle)."""
    name, _, figures = text.partition("=")
    if name not in THROTTLE_NAMES:
        raise argparse.ArgumentTypeError(f"{name!r} is not one of {', '.join(THROTTLE_NAMES)}")
    requests, _, seconds = figures.partition("/")
    try:
        throttle = spec.Throttle(
            requests=int(requests),
            window_seconds=float(seconds) if seconds else spec.throttle(name).window_seconds,
        )
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give NAME=REQUESTS[/SECONDS]") from None
    if throttle.requests < 1 or throttle.window_seconds <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: requests and seconds must be positive")
    return name, throttle


def _pool_setting(text: str) -> tuple[str, int]:
    """``--key-pool CLASS=N``: N keys of the class (N from 1)."""
    name, _, count = text.partition("=")
    if name not in bootstrap.POOLED:
        raise argparse.ArgumentTypeError(
            f"{name!r}: not a key class a pool is served for ({', '.join(bootstrap.POOLED)})"
        )
    if not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give CLASS=N, N a whole number from 1")
    return name, int(count)


def build_server(
    db: str = ":memory:",
    faults: Sequence[str] = (),
    *,
    documented_buckets: bool = False,
    throttles: Mapping[str, spec.Throttle] | None = None,
    pools: Mapping[str, int] | None = None,
) -> Server:
    """A provisioned server over the given database (``:memory:`` or a file path).

    ``pools``: keys per class (``--key-pool full=3``: three full keys), each on its own bucket.

    ``documented_buckets`` puts every key and every failed-authentication bucket on the
    documented bucket, as a staging system enforces it, instead of the demo's raised quotas.
    """
    # Failed authentications from one address share a bucket; the demo raises it so a
    # suite's many deliberate 401s are not paced (the profile says so). Unknown key values
    # keep the documented bucket each, which is how the 400-unit cost stays observable.
    server = Server(
        store=Store(db),
        faults=Faults(faults),
        unauthenticated_bucket=DOCUMENTED if documented_buckets else RAISED,
        documented_buckets=documented_buckets,
        throttles=dict(throttles or {}),
    )
    token = server.store.meta("control_token")
    if token:
        server.control_token = token
    else:
        server.store.set_meta("control_token", server.control_token)
    extensions.install(server)
    bootstrap.provision(server)
    bootstrap.provision_pools(server, dict(pools or {}))
    return server


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="amws-reference", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="start the reference server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8750, help="0 picks a free port")
    serve.add_argument("--db", default=":memory:", help="SQLite file, or :memory:")
    serve.add_argument("--profile-out", help="write the target profile here once listening")
    serve.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME",
        choices=sorted(CATALOGUE),
        help="switch on a named deviation from one rule (repeatable)",
    )
    serve.add_argument(
        "--documented-buckets",
        action="store_true",
        help="every key and failed authentication pays from the documented bucket "
        f"({DOCUMENTED.capacity} units, {DOCUMENTED.refill_per_minute} a minute), "
        "as on a staging system; the profile says so",
    )
    serve.add_argument(
        "--throttle",
        action="append",
        default=[],
        type=_throttle_setting,
        metavar="NAME=REQUESTS[/SECONDS]",
        help="the allowance of a throttle whose figure the documents leave open, as a "
        "deployment's administrator would set it (repeatable; names: "
        + ", ".join(THROTTLE_NAMES)
        + "; default: the spec's x-throttles); the profile declares the figures in force",
    )
    serve.add_argument(
        "--key-pool",
        action="append",
        default=[],
        type=_pool_setting,
        metavar="CLASS=N",
        help="serve N keys of a class alike in everything but their value, each on a bucket of "
        "its own; the profile lists them as a pool (repeatable; classes: "
        + ", ".join(bootstrap.POOLED)
        + ")",
    )
    faults = commands.add_parser(
        "faults",
        help="list the fault catalogue: the hand-written faults, then the spec-derived mutants",
        description="List every fault: name, rule, seam, what it does. The spec-derived "
        "mutants (one or more per documented constraint) follow the hand-written faults; a "
        "closing line counts both, and the constraints without a mutant of their own.",
    )
    kinds = faults.add_mutually_exclusive_group()
    kinds.add_argument("--hand-written", action="store_true", help="only the hand-written faults")
    kinds.add_argument("--mutants", action="store_true", help="only the spec-derived mutants")
    kinds.add_argument(
        "--without-mutant",
        action="store_true",
        help="the constraints that give no mutant of their own, and why (covered or equivalent)",
    )
    document = commands.add_parser(
        "spec",
        help="write the OpenAPI document (YAML)",
        description="Write the documented OpenAPI document, or with --enforced the document as "
        "this server enforces it: every x-assumed-schema overlay (constraints the API documents "
        "do not state, our choice) merged into the schema beside it.",
    )
    document.add_argument(
        "--enforced",
        action="store_true",
        help="merge our assumed overlays into their schemas (what this server enforces)",
    )
    document.add_argument("--output", metavar="FILE", help="write here instead of standard output")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "spec":
        text = spec_text(enforced=args.enforced)
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0
    if args.command == "faults":
        return _list_faults(args)
    return serve(
        args.host,
        args.port,
        args.db,
        args.profile_out,
        args.fault,
        documented_buckets=args.documented_buckets,
        throttles=dict(args.throttle),
        pools=dict(args.key_pool),
    )


def _list_faults(args: argparse.Namespace) -> int:
    found = census()
    if args.without_mutant:
        for kind, reasons in (
            ("covered", found.covered),
            ("equivalent", found.equivalent),
            ("undecidable", found.undecidable),
        ):
            for name, reason in reasons.items():
                print(f"{name}  {kind}: {reason}")
        return 0
    faults = [
        f
        for f in CATALOGUE.values()
        if not (args.hand_written and f.constraint) and not (args.mutants and not f.constraint)
    ]
    rows = [(f.name, f.rule, f.seam, f.does) for f in faults]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + row[3])
    mutants = sum(bool(f.constraint) for f in CATALOGUE.values())
    print(
        f"{len(CATALOGUE) - mutants} hand-written faults, {mutants} spec-derived mutants; "
        f"{len(found.covered)} constraints covered by another's mutant, "
        f"{len(found.equivalent)} equivalent, {len(found.undecidable)} undecidable "
        "(--without-mutant lists them)"
    )
    return 0


class _PlainDumper(yaml.SafeDumper):
    """Writes repeated values out in full: no anchors or aliases for a reader to resolve."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


ENFORCED_HEADER = (
    "# The AMWS OpenAPI document as the amws-conformance reference server enforces it: every\n"
    "# x-assumed-schema overlay (a constraint the API documents do not state, our choice) is\n"
    "# merged into the schema beside it. Written by `amws-reference spec --enforced`.\n"
)


def spec_text(*, enforced: bool = False) -> str:
    """The documented OpenAPI document as shipped, or the enforced one as YAML."""
    if not enforced:
        return (spec._load.SPEC_DIR / "openapi.yaml").read_text(encoding="utf-8")
    body = yaml.dump(
        spec.enforced(), Dumper=_PlainDumper, sort_keys=False, allow_unicode=True, width=100
    )
    return ENFORCED_HEADER + body


def serve(
    host: str,
    port: int,
    db: str,
    profile_out: str | None,
    faults: Sequence[str],
    *,
    documented_buckets: bool = False,
    throttles: Mapping[str, spec.Throttle] | None = None,
    pools: Mapping[str, int] | None = None,
) -> int:
    server = build_server(
        db, faults, documented_buckets=documented_buckets, throttles=throttles, pools=pools
    )
    # An explicit TCP protocol number matters: asyncio switches Nagle's algorithm off only for
    # sockets that declare IPPROTO_TCP, and with it on every answer waits ~40 ms for an ACK.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    # Listen before the profile exists: a harness connects as soon as it reads the file, and
    # the kernel queues those connections until uvicorn starts accepting them.
    sock.listen(2048)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    base_url = f"http://{shown}:{bound}"
    if profile_out:
        bootstrap.write_profile(server, base_url, profile_out)
    print(f"amws-reference listening on {base_url}", file=sys.stderr, flush=True)
    config = uvicorn.Config(
        create_app(server),
        log_level="warning",
        access_log=False,
        **uvicorn_options(server),
    )
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
