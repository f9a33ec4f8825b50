"""The command-line flags several verbs share, the options they ask for (`options_from`: argparse ->
`stackcheck.assembly.options.Options`), and writing a command's output."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:  # (argparse where the parser is built: stackcheck.commands.plan.args_of reads a plan without it)
    import argparse
    from typing import Any

    from stackcheck.assembly.options import Options
    from stackcheck.render.interface import RenderOptions


def positive_seconds(text: str) -> float:
    """--timeout: a finite number of seconds above zero (argparse turns the ValueError into exit 2)."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of seconds above 0, e.g. 8 or 0.5")
    return value


def file_name(text: str) -> str:
    """A FILE argument: an empty one (`--facts "$FACTS"` with the variable unset) is a usage error; it read as no
    --facts at all, and this box was probed instead of the file the user meant."""
    if not text:
        import argparse

        raise argparse.ArgumentTypeError("'': an empty file name")
    return text


def given(text: str) -> str:
    """A value that must not be empty (`--image "$IMAGE"`, `--assume-gpu "$GPU"` with the variable unset): an
    empty one read as the option not given, and this box was judged instead of what was named."""
    if not text:
        import argparse

        raise argparse.ArgumentTypeError("'': an empty value")
    return text


def add_facts_options(p: argparse.ArgumentParser, assume: bool = True) -> None:
    p.add_argument(
        "--facts",
        metavar="FILE",
        type=file_name,
        help="read a saved report or facts document instead of probing ('-' for stdin)",
    )
    p.add_argument(
        "--manifests",
        metavar="DIR",
        action="append",
        default=[],
        type=file_name,
        help="add or override manifest entries from DIR (repeatable; also $STACKCHECK_MANIFESTS)",
    )
    p.add_argument("--strict", action="store_true", help="exit 3 when a probe fails or times out")
    p.add_argument(
        "--deep", action="store_true", help="also read the CUDA architectures compiled into the installed binaries"
    )
    p.add_argument(
        "--timeout",
        type=positive_seconds,
        default=8.0,
        metavar="SECONDS",
        help="time budget for the probes, more than 0 (default 8)",
    )
    target = p.add_argument_group(
        "target environment",
        "whose packages are audited (default: the gated command's interpreter, an active VIRTUAL_ENV or "
        "CONDA_PREFIX that is not stackcheck's own, else stackcheck's own interpreter; $STACKCHECK_PYTHON)",
    )
    target.add_argument(
        "--python",
        metavar="PATH",
        type=file_name,
        help="audit this interpreter's packages, e.g. /opt/serve/bin/python",
    )
    target.add_argument("--env", metavar="DIR", dest="env_dir", type=file_name, help="audit this venv or conda prefix")
    target.add_argument("--root", metavar="DIR", type=file_name, help="audit an unpacked or mounted root filesystem")
    target.add_argument(
        "--image",
        metavar="PATH",
        type=file_name,
        help="audit a container image without running it (docker save tarball, OCI layout)",
    )
    target.add_argument(
        "--platform",
        metavar="OS/ARCH",
        type=given,
        help="with --image: the image of a multi-platform file to read, e.g. linux/arm64 (default: the only "
        "one, else this host's)",
    )
    target.add_argument(
        "--host-facts",
        metavar="FILE",
        type=file_name,
        help="take the driver and GPUs from a saved report (another host) and the packages from the target",
    )
    if assume:
        p.add_argument(
            "--assume-gpu", metavar="CC[xN]", type=given, help="evaluate for GPUs that are not here, e.g. 12.0x8"
        )
        p.add_argument(
            "--assume-driver",
            metavar="VERSION",
            type=given,
            help="evaluate for a driver that is not here, e.g. 580.95.05",
        )
        p.add_argument(
            "--assume-interconnect",
            metavar="KIND",
            type=given,
            help="nvswitch (NVLink through NVSwitch) | nvlink | pcie-switch | pcie-host-bridge | cross-socket | pcie",
        )


def add_output_options(p: argparse.ArgumentParser, registry: Mapping[str, Any], sources: bool = False) -> None:
    """--format (a key of the document's format registry, stackcheck.render, plus the old names of
    FORMAT_ALIASES), --output, and with `sources` --sources. Read the format with `format_choice` and the
    renderer's options with `render_options`."""
    from stackcheck.render import FORMAT_ALIASES

    formats = list(registry)
    aliases = [old for old, new in FORMAT_ALIASES.items() if new in formats and old not in formats]
    default = "text" if "text" in formats else formats[0]
    p.add_argument(
        "--format",
        choices=formats + aliases,
        default=None,
        metavar="FORMAT",
        help=f"output format: {', '.join(formats)} (default {default}"
        + ("; plain text when piped" if default == "text" else "")
        + ")"
        + (f"; {', '.join(aliases)}: old name{'s' if len(aliases) > 1 else ''} of text" if aliases else ""),
    )
    p.add_argument(
        "--output",
        metavar="FILE",
        type=file_name,
        help="write to FILE atomically (temporary file, then rename) instead of stdout",
    )
    if sources:
        p.add_argument(
            "--sources",
            action="store_true",
            help="list every source cited, with its title and address (the text shows sources by id)",
        )


def format_choice(args: argparse.Namespace, default: str = "text") -> str:
    """The --format asked for, an old name mapped to its new one (with a deprecation note on stderr)."""
    from stackcheck.render import FORMAT_ALIASES

    fmt = getattr(args, "format", None) or default
    if fmt in FORMAT_ALIASES:
        new = FORMAT_ALIASES[fmt]
        print(f"stackcheck: note: --format {fmt} is now called {new}; {fmt} still works for now", file=sys.stderr)
        return new
    return str(fmt)


def render_options(args: argparse.Namespace) -> RenderOptions:
    """What the command line asks of the renderer: colour on a terminal, --sources."""
    from stackcheck.render.interface import RenderOptions

    return RenderOptions(color=use_color(args), sources=bool(getattr(args, "sources", False)))


def options_from(args: argparse.Namespace) -> Options:
    from stackcheck.assembly.options import Options

    return Options(
        facts_file=getattr(args, "facts", None),
        manifests_dirs=list(getattr(args, "manifests", []) or []),
        assume_gpu=getattr(args, "assume_gpu", None),
        assume_driver=getattr(args, "assume_driver", None),
        assume_interconnect=getattr(args, "assume_interconnect", None),
        strict=bool(getattr(args, "strict", False)),
        deep=bool(getattr(args, "deep", False)),
        timeout_s=float(getattr(args, "timeout", 8.0) or 8.0),
        python=getattr(args, "python", None),
        env_dir=getattr(args, "env_dir", None),
        root=getattr(args, "root", None),
        image=getattr(args, "image", None),
        platform=getattr(args, "platform", None),
        host_facts=getattr(args, "host_facts", None),
    )


def use_color(args: argparse.Namespace) -> bool:
    if getattr(args, "output", None) or os.environ.get("NO_COLOR") or sys.stdout is None:
        return False
    return sys.stdout.isatty()


def emit(text: str, args: argparse.Namespace) -> None:
    """The report goes to stdout (or --output, atomically); diagnostics go to stderr."""
    out = getattr(args, "output", None)
    if out:
        from stackcheck.atomic import write_atomic

        write_atomic(out, text)
    else:
        from stackcheck.atomic import write_stdout

        write_stdout(text)  # a closed or full stdout: one line, exit 2


# ---- input that forgives: near misses named, equivalent spellings accepted ------------------------------


def allow_ids(values: list[str], check: Callable[[list[str]], list[str]]) -> list[str]:
    """`--allow` values read as `--require`'s are (feature_id): comma-separated, and a value whose spelling with
    `-` for `_` and in lower case is a known id (`check` accepts it) is that id; `check` (the gate's check_allow)
    then judges them all, naming a value it does not know as the user wrote it."""
    from stackcheck.errors import UsageError

    out = []
    for value in (x.strip() for item in values for x in item.split(",") if x.strip()):
        spelled = value.lower().replace("_", "-")
        if spelled != value:
            try:
                check([spelled])
            except UsageError:
                spelled = value
        out.append(spelled)
    return check(out)


def feature_id(name: str, known: list[str], option: str = "feature") -> str:
    """A feature id as the manifests spell it: `_` and `-` are the same, case does not matter; a near miss
    is a usage error that names the closest id ("did you mean torch-symm-mem?")."""
    wanted = name.strip().lower().replace("_", "-")
    if wanted in known:
        return wanted
    import difflib  # a near miss only (difflib with heapq is ~1 ms of a `plan --want`)

    close = difflib.get_close_matches(wanted, known, n=3, cutoff=0.6)
    close += [k for k in known if wanted and (k.startswith(wanted) or wanted in k) and k not in close][:3]
    from stackcheck.errors import UsageError

    if close:
        hint = " or ".join(close[:3])
        raise UsageError(f"{option} {name!r}: no such feature; did you mean {hint}? (all: stackcheck explain --list)")
    raise UsageError(f"{option} {name!r}: no such feature (known: {', '.join(sorted(known))})")
