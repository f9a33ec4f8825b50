"""`stackcheck facts template`: a commented facts document to start from (shipped in the package, so a
pipx install has it too); `stackcheck facts check FILE`: read a facts file as --facts reads it and say what
it holds, or exactly what is wrong with it (exit 2).

    stackcheck facts template > box.json && $EDITOR box.json && stackcheck audit --facts box.json"""

from __future__ import annotations

import argparse

from stackcheck.commands.arguments import emit, file_name
from stackcheck.errors import EXIT_OK


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="facts_command", metavar="ACTION", required=True)
    t = sub.add_parser("template", help="print a commented facts document to start from")
    t.add_argument("--output", metavar="FILE", type=file_name, help="write to FILE atomically instead of stdout")
    c = sub.add_parser("check", help="read a facts file as --facts does; say what it holds or what is wrong")
    c.add_argument("file", help="the facts file ('-' for standard input)")


def template_text() -> str:
    from importlib import resources

    return (resources.files("stackcheck") / "facts_template.jsonc").read_text(encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    if args.facts_command == "template":
        emit(template_text(), args)
        return EXIT_OK
    from stackcheck.facts.model import load_facts_document
    from stackcheck.redact import redact_text, terminal_safe

    facts, host = load_facts_document(args.file)
    sections = ", ".join(sorted(k for k in facts if k != "assumed")) or "nothing"
    gpus = facts.get("gpus")
    pkgs = facts.get("packages") or {}
    installed = [f"{n} {p.get('version')}" for n, p in pkgs.items() if isinstance(p, dict) and p.get("installed")]
    lines = [
        f"{args.file}: a stackcheck facts document",
        f"  sections: {sections}",
        f"  gpus: {len(gpus)}" if isinstance(gpus, list) else "  gpus: unknown",
        f"  packages: {', '.join(installed) or 'none installed'}" if "packages" in facts else "  packages: unknown",
        f"  host: {(host or {}).get('hostname') or 'unknown'}",
    ]
    emit(terminal_safe(redact_text("\n".join(lines)) + "\n"), args)  # the name, a version, a host: from the file
    return EXIT_OK
