"""`stackcheck manifests validate [DIR]`: every error at once, each with file and JSON path.
`stackcheck manifests derive WHEEL_OR_DIR… [--against DIR] [--output DIR]`: the manifest entries a release's
own files imply (stackcheck.derive), compared with the data and written as a drop-in manifests directory."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from stackcheck.commands.arguments import file_name
from stackcheck.errors import EXIT_BAD_INPUT, EXIT_FINDING, EXIT_OK, ManifestError


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    v = sub.add_parser("validate", help="validate the shipped manifests, or DIR merged over them")
    v.add_argument("dir", nargs="?", help="a directory of your own manifests (default: the shipped set)")
    d = sub.add_parser(
        "derive",
        help="read pins, gate tables, flags and architectures from wheels or installed packages",
        description="Read what releases' own files say (METADATA pins, the gate tables of gates.json, the "
        "server's flags, the SASS/PTX targets of their shared objects), each with its file and line. "
        "Exit 0: read (and, with --against, nothing differs); 1: something differs from the data; 2: bad input.",
    )
    d.add_argument(
        "paths",
        nargs="+",
        metavar="WHEEL_OR_DIR",
        help="a .whl, an unpacked wheel, or an installed package's directory",
    )
    d.add_argument(
        "--against",
        metavar="DIR",
        help="compare with these manifests (merged over the shipped set) and print what differs",
    )
    d.add_argument(
        "--output",
        metavar="DIR",
        type=file_name,
        help="write components.json, gates.json and launch.json with the derived entries merged in",
    )
    d.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    if args.action == "derive":
        return run_derive(args)
    from pathlib import Path

    from stackcheck.knowledge.loader import _parse as parse_manifest
    from stackcheck.knowledge.loader import user_texts
    from stackcheck.knowledge.package_data import shipped_texts
    from stackcheck.knowledge.validate import check_schemas_against_metaschema, validate_documents

    problems = check_schemas_against_metaschema()
    if args.dir:
        try:
            texts = user_texts(Path(args.dir))
        except ManifestError as exc:
            problems.extend(exc.problems)
            texts = {}
        partial = True
        if not texts and not problems:
            problems.append(f"{args.dir}: no manifest files (expected some of meta.json, features.json, ...)")
    else:
        texts = shipped_texts()
        partial = False
    docs = {}
    for name, (origin, text) in texts.items():
        try:
            docs[name] = (origin, parse_manifest(text, origin))
        except ManifestError as exc:
            problems.extend(exc.problems)
    problems.extend(validate_documents(docs, partial=partial))
    from stackcheck.redact import message_safe

    if problems:
        from stackcheck.atomic import write_stdout

        write_stdout("".join(message_safe(line) + "\n" for line in problems))
    where = args.dir or "shipped manifests"
    if problems:
        print(message_safe(f"{len(problems)} problem(s) in {where}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    print(message_safe(f"ok: {len(docs)} file(s) in {where} are valid"), file=sys.stderr)
    return EXIT_OK


def run_derive(args: argparse.Namespace) -> int:
    from pathlib import Path

    from stackcheck.derive.compare import compare
    from stackcheck.derive.emit import emit
    from stackcheck.derive.metadata import MetadataError
    from stackcheck.derive.release import KINDS, derive_release, read_metadata
    from stackcheck.derive.report import differences, printable, summary
    from stackcheck.derive.tree import TreeError, open_releases
    from stackcheck.errors import BadInputError, OutputError
    from stackcheck.knowledge.loader import load
    from stackcheck.render.jsonout import json_document

    manifests = load([args.against] if args.against else [])
    derived: list[dict[str, Any]] = []
    for path in args.paths:
        try:
            releases = list(open_releases(path))
            skipped = 0
            for release in releases:
                try:
                    read_metadata(release)
                    if len(releases) > 1 and release.name not in KINDS:
                        skipped += 1  # a site directory: only the packages derive knows
                        continue
                    derived.append(derive_release(release, manifests))
                finally:
                    release.tree.close()
            if skipped:
                print(f"{path}: {skipped} other distribution(s) skipped", file=sys.stderr)
        except (TreeError, MetadataError) as exc:
            raise BadInputError(printable(str(exc))) from None
    found = False
    if args.format == "json":
        docs = []
        for d in derived:
            doc = dict(d)
            if args.against:
                cmp = compare(d, manifests)
                doc["comparison"] = {
                    "known": cmp.known,
                    "agreement": cmp.agreement(),
                    "findings": [f.to_json() for f in cmp.findings],
                }
                found = found or bool(cmp.differences)
            docs.append(doc)
        print(json_document(docs), end="")
    else:
        for d in derived:
            for line in summary(d):
                print(printable(line))
            if args.against:
                cmp = compare(d, manifests)
                found = found or bool(cmp.differences)
                for line in differences(cmp, args.against):
                    print(printable(line))
    if args.output:
        out = Path(args.output)
        docs_out, changes = emit(derived, manifests)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"{out}: cannot create: {exc.strerror or exc}") from None
        from stackcheck.atomic import write_atomic

        for name, doc in docs_out.items():
            write_atomic(out / name, json_document(doc))  # the layout of the shipped manifests
        for line in changes:
            print(printable(f"wrote {line}"), file=sys.stderr)
        print(f"wrote {', '.join(sorted(docs_out))} to {out} ({len(changes)} change(s))", file=sys.stderr)
    return EXIT_FINDING if found else EXIT_OK
