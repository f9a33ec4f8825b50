#!/usr/bin/env python3
"""Regroup stackcheck's modules and tests into folders that show the architecture (issue 19).

The mapping is data (MODULES, TESTS below); the script applies it to any checkout of main:

    python3 tools/regroup.py --check     # what would move, what is unknown; changes nothing
    python3 tools/regroup.py             # git mv, rewrite every reference, regenerate docs/layout.md
    python3 tools/regroup.py --layout    # only (re)write docs/layout.md from the mapping

What a run does, in order:
1. refuses a dirty work tree (exit 2), and lists every top-level module, package or test file the mapping
   does not know (exit 2, nothing changed; --leave-unknown moves the rest and leaves those where they are);
2. `git mv`s each module (a package moves with every file in it) and each test file, and writes the new
   packages' __init__.py files (a docstring, no import: start-up cost stays the same);
3. rewrites every reference in the tracked text files: `from stackcheck[.x] import y` statements (split
   when the names now live in different packages; a module whose name changed is imported under its new
   name and the name is renamed in that file where that is safe, else imported `as` the old name), dotted
   names anywhere (`stackcheck.x.attr` in monkeypatch targets, importlib names, COMMANDS, docs, manifests'
   source titles), file paths (`stackcheck/x.py`, `stackcheck/deep/`, `"stackcheck" / "deep" / ...`,
   `tests/test_x.py`), package-relative paths in backticks in Markdown when the basename is unambiguous,
   `Path(__file__).parent...` in moved tests (one level deeper), `from test_x import` between test files
   (`from <group>.test_x import`: tests/ is on sys.path through tests/conftest.py), the pyproject packages
   list, and the few literals in LITERALS;
4. runs `ruff check --select I --fix` and `ruff format` on the Python files it changed (import order);
5. prints what it could not rewrite (bare old module names left in prose) for a reader to judge.

A second run finds nothing to move and does nothing (exit 0). Exit codes: 0 done or nothing to do,
2 refused (dirty tree, unknown modules, a target that already exists), 1 --check found unknown modules.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import shutil
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: the groups, in the order the architecture reads, each with the reason it exists (docs/layout.md and the
#: package's docstring)
GROUPS: dict[str, str] = {
    "stackcheck.facts": "What a box is: the typed shapes of the facts, reading a saved facts document (checked "
    "against the report schema without importing jsonschema), the implied facts a facts file leaves out, and "
    "the values facts hold (versions, CUDA targets).",
    "stackcheck.probes": "Reading the facts from a box: one probe per section behind one interface, the "
    "filesystem view every probe reads through, the runner that schedules them in waves.",
    "stackcheck.readers": "Readers of the box's files that probes and derive share: SGLang's source tables "
    "(ast), ELF and fatbin headers (compiled targets), shared-library resolution. Was deep/, a name that said "
    "--deep although the source tables are read on every audit.",
    "stackcheck.derive": "A release's own files (wheel, unpacked tree, installed package) read into manifest "
    "entries, and the judgement of a release newer than the data.",
    "stackcheck.image": "Container images read without Docker: a filesystem view over their layers.",
    "stackcheck.knowledge": "The manifests: loading the shipped and user data, full validation, the sources "
    "every output document cites.",
    "stackcheck.verdicts": "facts + manifests -> verdicts: the evaluation context and its documented fact "
    "paths, the rule engine, each feature's path to the kernel.",
    "stackcheck.plan": "verdicts -> plan: the solver, hypothetical facts, ordered steps, installers.",
    "stackcheck.launch": "Around a server's launch: the gate (command line -> required features -> allow or "
    "refuse), its preflight checks, the launch recommendation, the watched child and the crash triage.",
    "stackcheck.documents": "The output documents: the versioned report, the diff of two reports, the fleet "
    "summary of many.",
    "stackcheck.render": "Every document's formats (text, json, markdown, prometheus, ...), one plug-in family.",
    "stackcheck.assembly": "Assembling the parts for a command: which box and interpreter (target), facts "
    "probed or read, --assume-*, evaluation, plan (pipeline), and the audit's plan cache (here, not in plan/, "
    "so that a cache hit never imports the planner).",
    "stackcheck.commands": "The command line's verbs, one module per verb (add_arguments + run), the argument "
    "parser and the arguments several verbs share.",
}

#: old module -> new module (dotted). A package maps every module and file in it.
MODULES: dict[str, str] = {
    # facts
    "stackcheck.facts": "stackcheck.facts.model",
    "stackcheck.versions": "stackcheck.facts.versions",
    "stackcheck.archs": "stackcheck.facts.archs",
    "stackcheck.implied": "stackcheck.facts.implied",
    "stackcheck.schemas_check": "stackcheck.facts.schema_check",
    "stackcheck.minischema": "stackcheck.facts.minischema",
    # readers (was deep/)
    "stackcheck.deep": "stackcheck.readers",
    "stackcheck.probes.fsview": "stackcheck.readers.fsview",
    # knowledge
    "stackcheck.manifest_loader": "stackcheck.knowledge.loader",
    "stackcheck.validate": "stackcheck.knowledge.validate",
    "stackcheck.sources": "stackcheck.knowledge.sources",
    "stackcheck.package_data": "stackcheck.knowledge.package_data",
    "stackcheck.manifest_types": "stackcheck.knowledge.types",
    # verdicts
    "stackcheck.context": "stackcheck.verdicts.context",
    "stackcheck.fact_paths": "stackcheck.verdicts.fact_paths",
    "stackcheck.verdicts": "stackcheck.verdicts.engine",
    "stackcheck.path": "stackcheck.verdicts.kernel_path",
    "stackcheck.verdict_types": "stackcheck.verdicts.types",
    # plan
    # (not plan/: importing stackcheck.plan.x runs plan/__init__.py, the planner, which a cache hit must not load)
    "stackcheck.plan_cache": "stackcheck.assembly.plan_cache",
    # launch
    "stackcheck.gate": "stackcheck.launch.gate",
    "stackcheck.gate_preflight": "stackcheck.launch.gate_preflight",
    "stackcheck.preflight": "stackcheck.launch.preflight",
    "stackcheck.recommend": "stackcheck.launch.recommend",
    "stackcheck.watch": "stackcheck.launch.watch",
    "stackcheck.triage": "stackcheck.launch.triage",
    # documents
    "stackcheck.report": "stackcheck.documents.report",
    "stackcheck.diff": "stackcheck.documents.diff",
    "stackcheck.fleet": "stackcheck.documents.fleet",
    # assembly
    "stackcheck.pipeline": "stackcheck.assembly.pipeline",
    "stackcheck.target": "stackcheck.assembly.target",
    # commands
    "stackcheck.cli_parser": "stackcheck.commands.parser",
    "stackcheck.options": "stackcheck.commands.arguments",
    **{
        f"stackcheck.cmd_{verb}": f"stackcheck.commands.{verb}"
        for verb in (
            "audit", "diff", "explain", "facts", "fleet", "gate", "manifests", "plan", "probe", "recommend",
            "triage",
        )
    },
}  # fmt: skip

#: top-level modules and packages that stay where they are, and why
STAY: dict[str, str] = {
    "stackcheck": "the package (__version__)",
    "stackcheck.__main__": "python -m stackcheck",
    "stackcheck.cli": "the entry point (console script stackcheck.cli:run) and the verb table",
    "stackcheck.errors": "every error class with its exit code; every layer raises them",
    "stackcheck.atomic": "writing output files and stdout; used by the commands and the launch",
    "stackcheck.redact": "the one place that decides what text from the box may be shown; every layer",
    "stackcheck.paths": "path names without importing pathlib (start-up); every layer",
    "stackcheck.record": "@record, value classes without importing dataclasses (start-up); every layer",
    "stackcheck.probes": "already a package",
    "stackcheck.render": "already a package",
    "stackcheck.plan": "already a package",
    "stackcheck.derive": "already a package",
    "stackcheck.image": "already a package",
    "stackcheck.manifests": "package data (a link to manifests/)",
    "stackcheck.schemas": "package data (a link to schemas/)",
}

#: test file (under tests/) -> its group folder: tests mirror the package
TESTS: dict[str, str] = {
    # facts
    "test_versions.py": "facts",
    "test_archs_rules.py": "facts",
    "test_implied.py": "facts",
    "test_minischema.py": "facts",
    "test_package_list.py": "facts",
    # probes
    "test_probe_nvml.py": "probes",
    "test_probe_packages.py": "probes",
    "test_probe_runner.py": "probes",
    "test_probe_system.py": "probes",
    "test_probe_toolkits.py": "probes",
    "test_probe_hostile.py": "probes",
    "test_probe_issue16.py": "probes",
    "test_python_env.py": "probes",
    "test_fsview.py": "readers",
    "test_nvml_early.py": "probes",
    # readers
    "test_elf_fatbin.py": "readers",
    "test_libs.py": "readers",
    "test_sourcetables.py": "readers",
    "test_kernel_checks.py": "readers",
    "test_kernel_gates_registry.py": "readers",
    # derive
    "test_derive.py": "derive",
    "test_derive_audit.py": "derive",
    "test_derive_registry.py": "derive",
    # image
    "test_image.py": "image",
    "test_image_cli.py": "image",
    "test_image_fastscan.py": "image",
    "test_image_hostile.py": "image",
    "test_image_python.py": "image",
    "test_image_require.py": "image",
    # knowledge
    "test_manifests.py": "knowledge",
    "test_manifest_data.py": "knowledge",
    "test_feature_data.py": "knowledge",
    # verdicts
    "test_fact_paths.py": "verdicts",
    "test_feature_paths.py": "verdicts",
    "test_checks_issue16.py": "verdicts",
    "test_eagle3_pcie_ipc.py": "verdicts",
    "test_quantify.py": "verdicts",
    "test_quantify_dates.py": "verdicts",
    # plan
    "test_plan.py": "plan",
    "test_plan_cache.py": "assembly",
    "test_plan_installers.py": "plan",
    "test_plan_memo.py": "plan",
    # launch
    "test_gate.py": "launch",
    "test_gate_fail_closed.py": "launch",
    "test_gate_preflight.py": "launch",
    "test_gate_scopes.py": "launch",
    "test_preflight.py": "launch",
    "test_recommend.py": "launch",
    "test_recommend_upstream.py": "launch",
    "test_watch.py": "launch",
    "test_triage.py": "launch",
    "test_triage_issue16.py": "launch",
    "test_triage_plan.py": "launch",
    # documents
    "test_fleet.py": "documents",
    # render
    "test_render_registry.py": "render",
    "test_exports.py": "render",
    "test_output_layout.py": "render",
    # assembly
    "test_target.py": "assembly",
    "test_target_cli.py": "assembly",
    # commands
    "test_cli.py": "commands",
}

#: tests that stay in tests/: they are about the whole package, not one group
ROOT_TESTS: dict[str, str] = {
    "test_cases.py": "the scenario case folders, end to end",
    "test_realworld.py": "the real-world corpus, end to end",
    "test_documents.py": "every JSON document against its schema",
    "test_hostile.py": "hostile input to every verb",
    "test_hostile_files.py": "hostile files wherever stackcheck reads directories",
    "test_properties_hostile.py": "property tests over every input class",
    "test_input_forgiving.py": "spellings accepted by every verb",
    "test_output_safety.py": "nothing leaks from any output path",
    "test_atomic.py": "stackcheck/atomic.py (top level)",
    "test_redact.py": "stackcheck/redact.py (top level)",
    "test_record.py": "stackcheck/record.py (top level)",
    "test_startup.py": "start-up cost of the whole command line",
    "test_import_graph.py": "the package's import graph",
    "test_no_execution.py": "the whole package never evaluates data",
    "test_knowledge_in_data.py": "no knowledge in any module's code",
    "test_wheel.py": "the built wheel",
    "test_ci_example.py": "examples/ci",
    "test_longest_functions.py": "tools/longest_functions.py",
}

#: literals the general rules cannot know: (file as it is named before the move, old text, new text).
#: A literal not found is reported (someone changed that line), never an error.
LITERALS: list[tuple[str, str, str]] = [
    (
        "tests/test_startup.py",
        'm.startswith("stackcheck.cmd_")]',
        'm.startswith("stackcheck.commands.") and m != "stackcheck.commands.parser"]',
    ),
    (
        "tests/test_render_registry.py",
        'rel.startswith(("cmd_", "render/"))',
        'rel.startswith(("commands/", "render/"))',
    ),
    ("docs/design.md", "one `cmd_*.py` module per verb", "one module per verb in `commands/`"),
    ("README.md", "one `cmd_*.py` per verb", "one module per verb in `commands/`"),
    ("stackcheck/cli.py", "own module (cmd_<verb>.py)", "own module (commands/<verb>.py)"),
    ("stackcheck/gate_preflight.py", "The order in cmd_gate:", "The order in commands/gate.py:"),
    ("stackcheck/render/gate.py", "`cmd_gate.public_document(doc)`", "`commands.gate.public_document(doc)`"),
    ("tests/test_import_graph.py", "# manifest_loader imports validate", "# knowledge.loader imports validate"),
    ("docs/design.md", "\ntarget.py: the filesystem view", "\nassembly/target.py: the filesystem view"),
    ("docs/design.md", "\ncontext.py + verdicts.py  ← manifests", "\nverdicts/ (context.py, engine.py)  ← manifests"),
    (
        "docs/design.md",
        "\nreport.py (the versioned JSON document)",
        "\ndocuments/report.py (the versioned JSON document)",
    ),
]

#: test files whose string literals are paths relative to the package directory ("facts.py")
PACKAGE_RELATIVE_TESTS = ("tests/test_knowledge_in_data.py", "tests/test_render_registry.py")

#: files never rewritten: this script (it names the old modules on purpose) and the layout it writes
NOT_REWRITTEN = ("tools/regroup.py", "docs/layout.md")
#: data folders: recorded upstream files and outputs, never rewritten
DATA_DIRS = ("tests/data/", "tests/cases/", "tests/plan_cases/", "tests/realworld/", "tests/recommend/")
LINE_LENGTH = 120  # pyproject.toml [tool.ruff] line-length
#: comments that tools read: never split (ruff does not count a line that ends in one as too long)
PRAGMA = re.compile(r"#\s*(type:|noqa|fmt:|pragma|pyright:|mypy:)")
TEXT_SUFFIXES = (".py", ".md", ".toml", ".json", ".jsonc", ".sh", ".txt", ".cfg", ".ini", ".yml", ".yaml", "")


# ---------------------------------------------------------------------------------------------- helpers


def git(*args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        sys.exit(f"regroup: git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def tracked() -> list[str]:
    return [p for p in git("ls-files", "-z").split("\0") if p]


def mod_path(dotted: str) -> str:
    return dotted.replace(".", "/")


def mapped(name: str) -> str:
    """The new dotted name of NAME (a module, a package or an attribute path below one), else NAME."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        head = ".".join(parts[:i])
        if head in MODULES:
            return ".".join([MODULES[head], *parts[i:]])
    return name


def check_mapping() -> None:
    """The mapping is one-to-one and a new name never lies inside an old one that is still mapped (a
    single pass then rewrites each reference once)."""
    news = list(MODULES.values())
    dupes = {n for n in news if news.count(n) > 1}
    if dupes:
        sys.exit(f"regroup: two modules map to {sorted(dupes)}")
    for new in news:
        if new in MODULES and MODULES[new] != new:
            # a new name that is itself an old name would be rewritten again by a later reader
            sys.exit(f"regroup: {new} is both a new and an old name")


# ---------------------------------------------------------------------------------------------- the plan


class Plan:
    def __init__(self, files: list[str]) -> None:
        self.files = set(files)
        self.moves: list[tuple[str, str]] = []
        self.done: list[str] = []
        self.stale: list[str] = []
        self.unknown: list[str] = []
        self.moved_modules: dict[str, str] = {}
        self.moved_tests: dict[str, str] = {}  # old path -> new path
        self._collect()

    def _collect(self) -> None:
        for old, new in MODULES.items():
            old_file, new_file = mod_path(old) + ".py", mod_path(new) + ".py"
            old_dir, new_dir = mod_path(old) + "/", mod_path(new) + "/"
            under = sorted(f for f in self.files if f.startswith(old_dir))
            if old_file in self.files:
                self.moves.append((old_file, new_file))
                self.moved_modules[old] = new
            elif under and not new_dir.startswith(old_dir):  # stackcheck/facts/ is facts.py's new home
                self.moves += [(f, new_dir + f[len(old_dir) :]) for f in under]
                self.moved_modules[old] = new
            elif new_file in self.files or any(f.startswith(new_dir) for f in self.files):
                self.done.append(old)
            else:
                self.stale.append(old)
        for name, group in TESTS.items():
            old, new = f"tests/{name}", f"tests/{group}/{name}"
            if old in self.files:
                self.moves.append((old, new))
                self.moved_tests[old] = new
            elif new in self.files:
                self.done.append(old)
            else:
                self.stale.append(old)
        self._unknown()

    def _unknown(self) -> None:
        known = set(MODULES) | set(MODULES.values()) | set(STAY) | set(GROUPS)
        for f in sorted(self.files):
            parts = f.split("/")
            if parts[0] == "stackcheck" and len(parts) == 2 and f.endswith(".py"):
                name = "stackcheck." + parts[1][:-3]
                if parts[1] == "__init__.py":
                    continue
                if name not in known:
                    self.unknown.append(f)
            elif parts[0] == "stackcheck" and len(parts) > 2:
                pkg = "stackcheck." + parts[1]
                if pkg not in known and f"stackcheck/{parts[1]}/" not in self.unknown:
                    self.unknown.append(f"stackcheck/{parts[1]}/")
            elif parts[0] == "tests" and len(parts) == 2 and parts[1].startswith("test_") and f.endswith(".py"):
                if parts[1] not in TESTS and parts[1] not in ROOT_TESTS:
                    self.unknown.append(f)

    def new_path(self, old: str) -> str:
        for a, b in self.moves:
            if a == old:
                return b
        return old


# ---------------------------------------------------------------------------------------------- rewriting


def _regex(keys: list[str], left: str, right: str) -> re.Pattern[str] | None:
    if not keys:
        return None
    alts = "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))
    return re.compile(f"{left}({alts}){right}")


class Rewriter:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.mods = plan.moved_modules
        # dotted names: `stackcheck.deep` then `.elf`, `stackcheck.facts` not `stackcheck.facts_template`
        self.dotted = _regex(list(self.mods), r"(?<![\w.])", r"(?!\w)")
        # file paths: stackcheck/facts.py, stackcheck/deep/ and stackcheck/deep alone
        self.paths: dict[str, str] = {}
        for old, new in self.mods.items():
            if mod_path(old) + ".py" in plan.files:
                self.paths[mod_path(old) + ".py"] = mod_path(new) + ".py"
            else:
                self.paths[mod_path(old)] = mod_path(new)
        for old, new in plan.moved_tests.items():
            self.paths[old] = new
        self.path_re = _regex(list(self.paths), r"(?<![\w./])", r"(?![\w])")
        # package-relative paths, for backticked Markdown and PACKAGE_RELATIVE_TESTS literals
        self.rel: dict[str, str] = {}
        for a, b in plan.moves:
            if a.startswith("stackcheck/"):
                self.rel[a[len("stackcheck/") :]] = b[len("stackcheck/") :]
        for old, new in self.mods.items():
            if mod_path(old) + ".py" not in plan.files:  # a package: its folder name too
                self.rel[mod_path(old)[len("stackcheck/") :] + "/"] = mod_path(new)[len("stackcheck/") :] + "/"
        basenames = [Path(f).name for f in plan.files if f.startswith("stackcheck/")]
        self.unambiguous = {k for k in self.rel if k.endswith("/") or basenames.count(Path(k).name) == 1}
        self.test_modules = {Path(o).stem: Path(n).parent.name for o, n in plan.moved_tests.items()}
        self.notes: list[str] = []
        #: moved file (new path) -> how many folders deeper it now is
        self.depth = {b: b.count("/") - a.count("/") for a, b in plan.moves if b.endswith(".py")}

    # -- plain text ------------------------------------------------------------------------------------

    def text(self, s: str, *, markdown: bool = False) -> str:
        if self.dotted:
            s = self.dotted.sub(lambda m: self.mods[m.group(1)], s)
        if self.path_re:
            s = self.path_re.sub(lambda m: self.paths[m.group(1)], s)
        s = re.sub(r'"stackcheck"(?:\s*/\s*"[\w.]+")+', self._components, s)
        if markdown:
            s = re.sub(r"`([\w./]+)`", self._backticked, s)
        return s

    def _components(self, m: re.Match[str]) -> str:
        parts = re.findall(r'"([\w.]+)"', m.group(0))
        path = "/".join(parts)
        for old, new in sorted(self.paths.items(), key=lambda kv: -len(kv[0])):
            if path == old or path.startswith(old + "/"):
                return " / ".join(f'"{p}"' for p in (new + path[len(old) :]).split("/"))
        return m.group(0)

    def _backticked(self, m: re.Match[str]) -> str:
        inner = m.group(1)
        key = inner if inner in self.rel else (inner + "/" if inner + "/" in self.rel else None)
        if key is None or key not in self.unambiguous:
            return m.group(0)
        new = self.rel[key]
        return f"`{new if inner.endswith('/') or key == inner else new.rstrip('/')}`"

    # -- Python ----------------------------------------------------------------------------------------

    def python(self, path: str, src: str) -> str:
        try:
            tree = ast.parse(src)
        except SyntaxError:
            self.notes.append(f"{path}: not valid Python, rewritten as text")
            return self.text(src)
        lines = src.splitlines(keepends=True)
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))

        def off(lineno: int, col: int) -> int:
            # ast columns are UTF-8 byte offsets
            line = lines[lineno - 1]
            return starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "replace"))

        edits: list[tuple[int, int, str]] = []
        renames: dict[str, str] = {}
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            new = self._import_from(path, node, tree, renames)
            if new is not None:
                a, b = off(node.lineno, node.col_offset), off(node.end_lineno or node.lineno, node.end_col_offset or 0)
                if "#" in src[a:b]:
                    self.notes.append(f"{path}:{node.lineno}: a comment inside this import was dropped")
                edits.append((a, b, new))
        for old, new in renames.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.id == old:
                    a = off(node.lineno, node.col_offset)
                    b = off(node.end_lineno or node.lineno, node.end_col_offset or 0)
                    if src[a:b] == old:
                        edits.append((a, b, new))
        depth = self.depth.get(path, 0)
        if depth > 0:
            edits += self._dunder_file(path, src, depth)
        elif depth < 0 and "__file__" in src:
            self.notes.append(f"{path}: moved up a folder and reads __file__: check it")
        if path in [self.plan.new_path(p) for p in PACKAGE_RELATIVE_TESTS]:
            edits += self._package_literals(src)
        edits.sort()
        out, pos = [], 0
        for a, b, new in edits:
            if a < pos:  # nested (a rename inside a rewritten import): the import wins
                continue
            out += [self.text(src[pos:a]), new]
            pos = b
        out.append(self.text(src[pos:]))
        return "".join(out)

    def _import_from(self, path: str, node: ast.ImportFrom, tree: ast.Module, renames: dict[str, str]) -> str | None:
        module = node.module or ""
        if module in self.test_modules:  # from test_x import y, between test files
            return f"from {self.test_modules[module]}.{module} import " + ", ".join(
                a.name + (f" as {a.asname}" if a.asname else "") for a in node.names
            )
        if module != "stackcheck" and not module.startswith("stackcheck."):
            return None
        groups: dict[str, list[str]] = {}
        changed = False
        for alias in node.names:
            full = f"{module}.{alias.name}"
            new_full = self._mapped(full)
            parent, _, base = new_full.rpartition(".")
            entry = base
            if base != alias.name:
                if alias.asname:
                    entry = f"{base} as {alias.asname}"
                elif self._can_rename(tree, alias.name, base):
                    renames[alias.name] = base
                else:
                    entry = f"{base} as {alias.name}"
                    self.notes.append(f"{path}:{node.lineno}: kept the name {alias.name} for {new_full}")
            elif alias.asname:
                entry = f"{base} as {alias.asname}"
            changed |= new_full != full
            groups.setdefault(parent, []).append(entry)
        if not changed:
            return None
        indent = " " * node.col_offset
        stmts = [f"from {parent} import {', '.join(names)}" for parent, names in groups.items()]
        return ("\n" + indent).join(stmts)

    def _mapped(self, name: str) -> str:
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            head = ".".join(parts[:i])
            if head in self.mods:
                return ".".join([self.mods[head], *parts[i:]])
        return name

    @staticmethod
    def _can_rename(tree: ast.Module, old: str, new: str) -> bool:
        """OLD can become NEW everywhere in this file: OLD is bound only by the import, NEW is not used."""
        binds = 0
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == new:
                return False
            if isinstance(node, ast.Name) and node.id == old and not isinstance(node.ctx, ast.Load):
                return False
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in (old, new):
                return False
            if isinstance(node, ast.arg) and node.arg in (old, new):
                return False
            if isinstance(node, ast.keyword) and node.arg in (old, new):
                return False
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    bound = a.asname or a.name.split(".")[0]
                    binds += bound == old
                    if bound == new:
                        return False
            if isinstance(node, (ast.Global, ast.Nonlocal)) and old in node.names:
                return False
        return binds == 1

    def _dunder_file(self, path: str, src: str, depth: int) -> list[tuple[int, int, str]]:
        """A file moved DEPTH folders down: what it finds from its own __file__ is DEPTH levels further up
        (`Path(__file__).parent`, `.parents[N]`, `os.path.dirname(...__file__...)`)."""
        edits = []
        seen = set()
        pat = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?(\.parent(?!s)|\.parents\[(\d+)\])")
        for m in pat.finditer(src):
            a, b = m.span(1)
            new = ".parent" * (depth + 1) if m.group(2) is None else f".parents[{int(m.group(2)) + depth}]"
            edits.append((a, b, new))
            seen.add(m.start() + len("Path("))
        pat = re.compile(r"os\.path\.dirname\((?:os\.path\.abspath\(__file__\)|__file__)\)")
        for m in pat.finditer(src):
            a, b = m.span()
            edits.append((a, b, "os.path.dirname(" * depth + m.group(0) + ")" * depth))
            seen.add(src.index("__file__", a))
        for m in re.finditer(r"(?<!\.)__file__", src):  # stackcheck.__file__ is the package's own
            if m.start() not in seen:
                line = src.count("\n", 0, m.start()) + 1
                self.notes.append(f"{path}:{line}: __file__ in a form this script does not know: check it")
        return edits

    def _package_literals(self, src: str) -> list[tuple[int, int, str]]:
        edits = []
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type != tokenize.STRING or len(tok.string) < 2 or tok.string[0] not in "'\"":
                continue
            inner = tok.string[1:-1]
            if inner in self.rel:
                a = sum(len(x) for x in src.splitlines(keepends=True)[: tok.start[0] - 1]) + tok.start[1]
                edits.append((a, a + len(tok.string), tok.string[0] + self.rel[inner] + tok.string[0]))
        return edits


# ---------------------------------------------------------------------------------------------- steps


def dirty() -> bool:
    return bool(git("status", "--porcelain", "--untracked-files=normal").strip())


def write_inits(plan: Plan) -> list[str]:
    """Every new package folder gets an __init__.py with a docstring and no import."""
    made = []
    folders = {str(Path(b).parent) for a, b in plan.moves if b.startswith("stackcheck/") and b.endswith(".py")}
    for folder in sorted(folders):
        init = ROOT / folder / "__init__.py"
        if init.exists():
            continue
        dotted = folder.replace("/", ".")
        doc = textwrap.fill(GROUPS.get(dotted, f"{dotted}: see docs/layout.md."), width=112)
        init.write_text(f'"""{doc}"""\n', encoding="utf-8")
        made.append(f"{folder}/__init__.py")
    return made


def update_packages(text: str, files: set[str]) -> str:
    """pyproject's [tool.setuptools] packages: the renamed ones (already rewritten) plus the new ones."""
    m = re.search(r"^packages = \[(.*)\]$", text, re.M)
    if not m:
        print("regroup: no packages list in pyproject.toml: left alone")
        return text
    listed = re.findall(r'"([\w.]+)"', m.group(1))
    present = sorted({str(Path(f).parent).replace("/", ".") for f in files if f.endswith("/__init__.py")})
    present = [p for p in present if p.startswith("stackcheck")]
    keep = [p for p in listed if p in present or p in ("stackcheck.manifests", "stackcheck.schemas")]
    data = [p for p in keep if p in ("stackcheck.manifests", "stackcheck.schemas")]
    code = [p for p in keep if p not in data] + [p for p in present if p not in keep]
    items = ", ".join(f'"{p}"' for p in code + data)
    return text[: m.start()] + f"packages = [{items}]" + text[m.end() :]


def layout_markdown() -> str:
    """docs/layout.md from the mapping alone, so it can be written before the move."""
    out = [
        "# The package layout",
        "",
        "Generated by `python3 tools/regroup.py --layout` from the mapping in tools/regroup.py (issue 19): the",
        "folder tree reads facts → verdicts → plan, with probes, readers and images producing facts, render",
        "and commands around them. Do not edit by hand: change the mapping and run the script.",
        "",
        "## Groups",
        "",
        "| package | why it is a group |",
        "|---|---|",
    ]
    out += [f"| `{g.replace('.', '/')}/` | {why} |" for g, why in GROUPS.items()]
    out += ["", "Top-level modules that stay:", ""]
    out += [
        f"- `{mod_path(m)}{'/' if (ROOT / mod_path(m)).is_dir() else '.py'}` — {why}"
        for m, why in STAY.items()
        if m != "stackcheck"
    ]
    out += ["", "## Modules: before → after", "", "| before | after |", "|---|---|"]
    for a, b in MODULES.items():
        is_file = (ROOT / (mod_path(a) + ".py")).exists() or (ROOT / (mod_path(b) + ".py")).exists()
        end = ".py" if is_file else "/"
        out.append(f"| `{mod_path(a)}{end}` | `{mod_path(b)}{end}` |")
    out += ["", "## Tree after", "", "```"]
    tree: dict[str, list[str]] = {}
    for new in MODULES.values():
        parent, _, base = new.rpartition(".")
        tree.setdefault(parent, []).append(base)
    was = {new: old for old, new in MODULES.items()}
    top = [m.rpartition(".")[2] for m in STAY if m.count(".") == 1 and not (ROOT / mod_path(m)).is_dir()]
    out.append(f"stackcheck/  {', '.join(['__init__', *top])}")
    for g in GROUPS:
        # once applied, the tree shows what each folder holds (modules split off later included)
        folder = ROOT / mod_path(g)
        if folder.is_dir() and g in tree:
            tree[g] = sorted(
                {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
                | {p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
            )
        if g in tree and g in was:
            out.append(f"{mod_path(g)}/  (was {mod_path(was[g])}/), {', '.join(sorted(tree[g]))}")
        elif g in tree:
            out.append(f"{mod_path(g)}/  {', '.join(sorted(tree[g]))}")
        elif g in was:
            out.append(f"{mod_path(g)}/  (was {mod_path(was[g])}/)")
        else:
            out.append(f"{mod_path(g)}/  (as before)")
    for parent in sorted(tree):
        if parent not in GROUPS and parent != "stackcheck":
            out.append(f"{mod_path(parent)}/  {', '.join(sorted(tree[parent]))}")
    out += ["```", "", "## Tests", "", "Tests mirror the package: `tests/<group>/test_*.py`. Helpers (conftest.py,"]
    out += ["fake_nvml.py, imagebuild.py, registry_wheels.py, derive_fixtures.py) and data folders (cases/,"]
    out += ["plan_cases/, realworld/, recommend/, data/) stay in tests/; conftest.py puts tests/ on sys.path, so"]
    out += ["a test imports a helper by name and another group's test as `<group>.test_x`.", ""]
    out += ["| test | folder |", "|---|---|"]
    out += [f"| `{t}` | `tests/{g}/` |" for t, g in TESTS.items()]
    out += ["", "Tests that stay in tests/ (about the whole package):", ""]
    out += [f"- `{t}` — {why}" for t, why in ROOT_TESTS.items()]
    return "\n".join(out) + "\n"


def ruff(files: list[str]) -> None:
    exe = next((str(p) for p in (ROOT / ".venv" / "bin" / "ruff",) if p.exists()), shutil.which("ruff"))
    if not exe or not files:
        if files:
            print("regroup: ruff not found: run `ruff check --select I --fix` and `ruff format` on the moved files")
        return
    subprocess.run([exe, "check", "--select", "I", "--fix", "--quiet", *files], cwd=ROOT, check=False)
    subprocess.run([exe, "format", "--quiet", *files], cwd=ROOT, check=False)


def wrap_long_lines(path: Path, limit: int = LINE_LENGTH) -> list[int]:
    """A rewritten name can push a docstring or comment line past the line length: break it at the last
    space before the limit, the rest on a line of its own with the same indent (and `# ` in a comment).
    Returns the lines still too long (code: left for a person)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    if not any(len(line.rstrip("\n")) > limit for line in lines):
        return []
    prose: set[int] = set()  # line numbers (1-based) inside a multi-line string
    comments: dict[int, int] = {}  # line number -> column of its comment
    for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            prose.update(range(tok.start[0] + 1, tok.end[0]))
        elif tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.start[1]
    out: list[str] = []
    still: list[int] = []
    for n, line in enumerate(lines, 1):
        text = line.rstrip("\n")
        cut = text.rfind(" ", 0, limit + 1)
        indent = text[: len(text) - len(text.lstrip())]
        if len(text) <= limit:
            out.append(line)
        elif n in prose and cut > len(indent):
            out += [text[:cut] + "\n", indent + text[cut + 1 :] + "\n"]
        elif n in comments and not text[: comments[n]].strip() and cut > comments[n] + 2 and not PRAGMA.search(text):
            out += [text[:cut] + "\n", indent + "# " + text[cut + 1 :] + "\n"]
        else:
            out.append(line)
            if not PRAGMA.search(text):  # ruff does not count a line that ends in a pragma
                still.append(n)
    path.write_text("".join(out), encoding="utf-8")
    return still


def leftovers(plan: Plan) -> list[str]:
    """Bare old module names still in the tree (prose, comments) whose module was renamed: for a reader
    to judge (a local name or an argument may spell the same word on purpose)."""
    names = {
        old.rpartition(".")[2]
        for old, new in plan.moved_modules.items()
        if old.rpartition(".")[2] != new.rpartition(".")[2]
    }
    names.add("cmd_")
    distinctive = sorted(n for n in names if "_" in n)
    pat = re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in distinctive) + r")\w*")
    hits = []
    for f in tracked():
        if f in NOT_REWRITTEN or f.startswith(DATA_DIRS) or not f.endswith((".py", ".md")):
            continue
        for i, line in enumerate((ROOT / f).read_text(encoding="utf-8").splitlines(), 1):
            for m in pat.finditer(line):
                hits.append(f"{f}:{i}: {m.group(0)}")
    return hits


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="print what would move and what is unknown; change nothing")
    ap.add_argument("--layout", action="store_true", help="only (re)write docs/layout.md from the mapping")
    ap.add_argument("--leave-unknown", action="store_true", help="move the rest and leave unknown modules alone")
    args = ap.parse_args(argv)
    check_mapping()
    if args.layout:
        (ROOT / "docs" / "layout.md").write_text(layout_markdown(), encoding="utf-8")
        print("regroup: wrote docs/layout.md")
        return 0
    plan = Plan(tracked())
    for s in plan.stale:
        print(f"regroup: in the mapping but not in the tree (removed or renamed since?): {s}")
    if plan.unknown:
        print("regroup: not in the mapping (add each to MODULES/STAY or TESTS/ROOT_TESTS in tools/regroup.py):")
        for u in plan.unknown:
            print(f"  {u}")
    if args.check:
        for a, b in plan.moves:
            print(f"  {a} -> {b}")
        print(f"regroup: {len(plan.moves)} files to move, {len(plan.done)} already moved")
        return 1 if plan.unknown else 0
    if not plan.moves:
        print("regroup: nothing to move: already regrouped")
        return 0
    if plan.unknown and not args.leave_unknown:
        print("regroup: refused: unknown modules or tests (see above; --leave-unknown to move the rest)")
        return 2
    if dirty():
        print("regroup: refused: the work tree has changes; commit or stash them first")
        return 2
    clash = [b for _, b in plan.moves if (ROOT / b).exists()]
    if clash:
        print(f"regroup: refused: already there: {clash}")
        return 2
    rewriter = Rewriter(plan)
    for a, b in plan.moves:
        (ROOT / b).parent.mkdir(parents=True, exist_ok=True)
        git("mv", a, b)
    made = write_inits(plan)
    if made:
        git("add", *made)
    files = tracked()
    changed_py = []
    literals: dict[str, list[tuple[str, str]]] = {plan.new_path(f): [] for f, _, _ in LITERALS}
    for f, old, new in LITERALS:
        literals[plan.new_path(f)].append((old, new))
    for f in files:
        p = ROOT / f
        # a data folder's own scripts (tests/cases/update_expected.py) import the package: rewrite them
        in_data = f.startswith(DATA_DIRS) and (f.startswith("tests/data/") or not f.endswith(".py"))
        if f in NOT_REWRITTEN or in_data or p.is_symlink() or not p.is_file():
            continue
        if Path(f).suffix not in TEXT_SUFFIXES or (Path(f).suffix == "" and not f.startswith(".ci/")):
            continue
        try:
            src = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if f.endswith(".py"):
            new = rewriter.python(f, src)
        else:
            new = rewriter.text(src, markdown=f.endswith(".md"))
        for old, rep in literals.get(f, []):
            if old in new:
                new = new.replace(old, rep)
            else:
                rewriter.notes.append(f"{f}: literal not found (changed since?): {old}")
        if f == "pyproject.toml":
            new = update_packages(new, set(files))
        if new != src:
            p.write_text(new, encoding="utf-8")
            if f.endswith(".py"):
                changed_py.append(f)
    (ROOT / "docs" / "layout.md").write_text(layout_markdown(), encoding="utf-8")
    ruff(changed_py)
    for f in changed_py:  # after ruff format: it joins or splits code lines, never prose
        for n in wrap_long_lines(ROOT / f):
            rewriter.notes.append(f"{f}:{n}: longer than {LINE_LENGTH} characters after the rewrite")
    print(f"regroup: moved {len(plan.moves)} files, wrote {len(made)} __init__.py, rewrote references")
    for n in rewriter.notes:
        print(f"regroup: note: {n}")
    left = leftovers(plan)
    if left:
        print(f"regroup: {len(left)} bare old names left in prose or code (not rewritten; judge each):")
        for h in left:
            print(f"  {h}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
