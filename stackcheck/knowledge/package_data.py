"""The data shipped inside the package: the manifests (stackcheck.manifests) and their schemas
(stackcheck.schemas), read straight from the package directory, or through importlib.resources (with its
zipfile and tempfile imports) only when the package is not a directory on disk.

Both the loader (stackcheck.knowledge.loader) and the validator (stackcheck.knowledge.validate) read these; this module
imports neither, so the two sit in no import cycle."""

from __future__ import annotations

import os
from collections.abc import Iterable

# file name -> schema file name
MANIFEST_FILES: dict[str, str] = {
    "meta.json": "meta.schema.json",
    "sources.json": "sources.schema.json",
    "architectures.json": "architectures.schema.json",
    "components.json": "components.schema.json",
    "features.json": "features.schema.json",
    "checks.json": "features.schema.json",
    "gates.json": "gates.schema.json",
    "signatures.json": "signatures.schema.json",
    "launch.json": "launch.schema.json",
    "recommend.json": "recommend.schema.json",
    "preflight.json": "preflight.schema.json",
}


def _package_dir(name: str) -> str | None:
    """The directory of package data `stackcheck.<name>` when the package is installed as files (a wheel, a
    checkout), else None (a zip import: importlib.resources reads it then)."""
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name)
    return here if os.path.isfile(os.path.join(here, "__init__.py")) else None


def shipped_texts(names: Iterable[str] = MANIFEST_FILES) -> dict[str, tuple[str, str]]:
    """file name -> (origin, text) for every shipped manifest, or those named (the package directory, read
    directly)."""
    out: dict[str, tuple[str, str]] = {}
    base = _package_dir("manifests")
    if base is None:
        from importlib import resources

        root = resources.files("stackcheck.manifests")
        for name in names:
            res = root / name
            if res.is_file():
                out[name] = (f"manifests/{name}", res.read_text(encoding="utf-8"))
        return out
    for name in names:
        try:
            with open(os.path.join(base, name), encoding="utf-8") as fh:
                out[name] = (f"manifests/{name}", fh.read())
        except FileNotFoundError:
            continue
    return out


def schema_text(name: str) -> str:
    """One shipped schema's text (schemas/NAME)."""
    base = _package_dir("schemas")
    if base is None:
        from importlib import resources

        return (resources.files("stackcheck.schemas") / name).read_text(encoding="utf-8")
    with open(os.path.join(base, name), encoding="utf-8") as fh:
        return fh.read()


def schema_texts() -> dict[str, str]:
    base = _package_dir("schemas")
    if base is None:
        from importlib import resources

        root = resources.files("stackcheck.schemas")
        return {res.name: res.read_text(encoding="utf-8") for res in root.iterdir() if res.name.endswith(".json")}
    out: dict[str, str] = {}
    for name in sorted(os.listdir(base)):
        if name.endswith(".json"):
            with open(os.path.join(base, name), encoding="utf-8") as fh:
                out[name] = fh.read()
    return out
