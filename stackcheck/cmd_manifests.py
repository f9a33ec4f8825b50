"""`stackcheck manifests validate [DIR]`: every error at once, each with file and JSON path."""

from __future__ import annotations

import argparse
import sys

from stackcheck.errors import EXIT_BAD_INPUT, EXIT_OK, ManifestError


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    v = sub.add_parser("validate", help="validate the shipped manifests, or DIR merged over them")
    v.add_argument("dir", nargs="?", help="a directory of your own manifests (default: the shipped set)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from stackcheck.manifest_loader import _parse as parse_manifest
    from stackcheck.manifest_loader import shipped_texts, user_texts
    from stackcheck.validate import check_schemas_against_metaschema, validate_documents

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
    if problems:
        from stackcheck.atomic import write_stdout
        from stackcheck.redact import field_safe

        write_stdout("".join(field_safe(line) + "\n" for line in problems))
    where = args.dir or "shipped manifests"
    if problems:
        print(f"{len(problems)} problem(s) in {where}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"ok: {len(docs)} file(s) in {where} are valid", file=sys.stderr)
    return EXIT_OK
