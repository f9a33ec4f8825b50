"""What the seeded fact-check draws share (bench/factcheck7_draw.py onward; tests/realworld/FACTCHECK.md).

Each sample's script builds its populations and hands them to `draw`, which fixes the draw: per population its rows
sorted by their JSON text, written out, shuffled with one `random.Random(seed)` in the order given, the first k kept.
`gate` runs `stackcheck gate --dry-run --format json` in this process on a saved facts file. Three populations that
several samples draw are built here: `gate_allow_rows` (the gate's allows, one row per box, release and launch allowed),
`audit_ok_rows` (audit's ok feature verdicts, one row per distinct box, feature and reasons) and `plan_rows` (plan's
target and steps, one row per distinct box, option and plan).
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT, ROOT / "bench", ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


def stackcheck_json(args: list[str]) -> dict[str, Any]:
    """`stackcheck ARGS` run in this process; its stdout read as JSON (stderr dropped)."""
    from stackcheck.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        main(args)
    doc: dict[str, Any] = json.loads(buf.getvalue())
    return doc


def stackcheck_json_or_error(args: list[str]) -> dict[str, Any]:
    """stackcheck_json, or {"error": [its one-line message]} where the verb answered an error instead of JSON."""
    from stackcheck.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(args)
    try:
        doc: dict[str, Any] = json.loads(out.getvalue())
    except json.JSONDecodeError:
        return {"error": err.getvalue().strip().splitlines()[-1:] or [""]}
    return doc


def gate(facts: Path, line: list[str]) -> dict[str, Any]:
    """The JSON decision of `gate --dry-run` on facts for `python3 -m sglang.launch_server LINE`."""
    args = ["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--"]
    return stackcheck_json([*args, "python3", "-m", "sglang.launch_server", *line])


def write_models(out: Path, models: dict[str, dict[str, Any]]) -> None:
    """Each model's config.json under OUT/models/NAME, the directory a `--model-path` names."""
    for name, config in models.items():
        (out / "models" / name).mkdir(parents=True, exist_ok=True)
        (out / "models" / name / "config.json").write_text(json.dumps(config))


def final_releases() -> list[str]:
    """The SGLang releases of components.json without a post suffix, oldest first."""
    from stackcheck.knowledge.loader import load

    return [r["version"] for r in load().releases("sglang") if "post" not in r["version"]]


def release_tuple(release: str) -> tuple[int, ...]:
    """'0.5.10' -> (0, 5, 10): a final release's numbers, as the draw scripts compare them (was each script's _v)."""
    return tuple(map(int, release.split(".")))


def releases_between(first: tuple[int, ...], last: tuple[int, ...]) -> list[str]:
    """The final releases (final_releases) from `first` to `last`, both included (was each script's _releases)."""
    return [r for r in final_releases() if first <= release_tuple(r) <= last]


def gate_line(out: Path, path: Path, *flags: str) -> list[str]:
    """`gate --facts PATH --dry-run --format json` of a Llama 3 launch (OUT/models/llama3) with `flags`."""
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / "llama3"), *flags]
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def cc_box(out: Path, rel: str, cc: str) -> Path:
    """h200-newest with SGLang `rel`'s pins and every GPU's compute capability `cc`: OUT/box-CC-REL.json."""
    import copy

    from factcheck7_draw import release_box

    doc = copy.deepcopy(release_box("h200-newest", rel))
    for g in doc["facts"]["gpus"]:
        g["compute_capability"] = cc
    path = out / f"box-{cc}-{rel}.json"
    path.write_text(json.dumps(doc))
    return path


def draw(out: Path, seed: int, populations: list[tuple[int, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """The seeded draw over POPULATIONS ((k, rows) in order): each written to OUT/population-POP.json and its count
    printed, the drawn rows to OUT/drawn.json and printed one a line (without their "key")."""
    rng = random.Random(seed)
    drawn: list[dict[str, Any]] = []
    for k, rows in populations:
        rows.sort(key=lambda r: json.dumps(r, sort_keys=True))
        pop = rows[0]["pop"] if rows else "empty"
        (out / f"population-{pop}.json").write_text(json.dumps(rows, indent=1))
        print(f"population {pop}: {len(rows)} rows", flush=True)
        rng.shuffle(rows)
        drawn += rows[:k]
    (out / "drawn.json").write_text(json.dumps(drawn, indent=1))
    for row in drawn:
        print(json.dumps({k: v for k, v in row.items() if k != "key"}))
    return drawn


TRIPLE = "x86_64-linux-gnu"  # this machine's and the drawn Debian / Ubuntu hosts' GNU triplet (was each script's)


def keep_toolkits(names: Iterable[str]) -> None:
    """Restrict factcheck38_draw.TOOLKITS (the toolkits its roots lay out) to NAMES, in its own order (was the first
    line of factcheck41 to 44's main)."""
    import factcheck38_draw

    keep = set(names)
    factcheck38_draw.TOOLKITS = {k: v for k, v in factcheck38_draw.TOOLKITS.items() if k in keep}


def draw_undrawn(
    out: Path, seed: int, populations: list[tuple[int, list[dict[str, Any]]]], own: str
) -> list[dict[str, Any]]:
    """draw over POPULATIONS with each population's rows an earlier sample drew left out (undrawn(rows, OWN), OWN this
    sample's bench/factcheckN_drawn.json) (was the last line of factcheck42 to 44's main)."""
    return draw(out, seed, [(k, undrawn(rows, own)) for k, rows in populations])


def write_box(out: Path, doc: dict[str, Any], name: str) -> Path:
    """`doc` written as OUT/boxes/NAME (the directory made): the facts file of one drawn box."""
    path = out / "boxes" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def torchao_allow_rows(
    out: Path,
    releases: Sequence[str],
    torchaos: Sequence[str],
    torches: Sequence[str],
    transformers: Sequence[str],
    box: Callable[[Path, str, str, str, str], Path],
    line: Callable[..., list[str]],
) -> list[dict[str, Any]]:
    """The gate's allows of a Llama 3 launch (--tp 1, without and with --torchao-config int8wo) over SGLang release x
    torchao x torch x transformers, `box(out, rel, torchao, torch, transformers)` each box's facts file and
    `line(out, path, *flags)` its gate arguments (factcheck41 and 42's population t); a count printed per release."""
    rows: list[dict[str, Any]] = []
    for rel in releases:
        for torchao in torchaos:
            for torch in torches:
                for tf in transformers:
                    path = box(out, rel, torchao, torch, tf)
                    for config in ("", "int8wo"):
                        flags = ("--tp", "1", *(("--torchao-config", config) if config else ()))
                        if stackcheck_json_or_error(line(out, path, *flags)).get("decision") == "allow":
                            base = {"pop": "t", "sglang": rel, "torchao": torchao, "torch": torch}
                            rows.append({**base, "transformers": tf, "config": config})
        print(f"t {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


Box = TypeVar("Box")
Spec = TypeVar("Spec")


def drawn_before(own: str) -> set[str]:
    """Every row an earlier sample drew (bench/factcheck*_drawn.json but OWN, a file name), as JSON text without "pop"
    (was factcheck42_draw's _drawn_before)."""
    seen: set[str] = set()
    for path in sorted((ROOT / "bench").glob("factcheck*_drawn.json")):
        if path.name == own:
            continue
        for row in json.loads(path.read_text()):
            seen.add(json.dumps({k: v for k, v in row.items() if k != "pop"}, sort_keys=True))
    return seen


def undrawn(rows: list[dict[str, Any]], own: str) -> list[dict[str, Any]]:
    """ROWS less those an earlier sample drew (drawn_before(OWN)); how many were left out printed to stderr."""
    before = drawn_before(own)
    kept = [r for r in rows if json.dumps({k: v for k, v in r.items() if k != "pop"}, sort_keys=True) not in before]
    print(f"{rows[0]['pop'] if rows else '-'}: {len(rows) - len(kept)} rows drawn before, left out", file=sys.stderr)
    return kept


def gate_allow_rows(
    out: Path,
    boxes: Mapping[str, Spec],
    releases: Sequence[str],
    facts: Callable[[Path, str, Spec], Path],
    launches: Sequence[tuple[dict[str, Any], str, list[str]]],
    *,
    pop: str = "a",
) -> list[dict[str, Any]]:
    """`gate --facts F --dry-run --format json -- python3 -m sglang.launch_server --model-path OUT/models/MODEL ARGS`
    for each (name, spec) of BOXES in order, each release of RELEASES with F = FACTS(OUT, release, spec) (written once
    per box and release), and each (labels, MODEL, ARGS) of LAUNCHES in order: one row {"pop": POP, "box": name,
    "sglang": release, **labels} per allow (a verb's error is no allow: stackcheck_json_or_error); each box's running
    count printed to stderr. The draws of the twenty-seventh to thirty-first samples."""
    rows: list[dict[str, Any]] = []
    for box, spec in boxes.items():
        for rel in releases:
            path = facts(out, rel, spec)
            for labels, model, args in launches:
                line = ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / model)]
                gate_args = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line, *args]
                if stackcheck_json_or_error(gate_args).get("decision") == "allow":
                    rows.append({"pop": pop, "box": box, "sglang": rel, **labels})
        print(f"{pop} {box}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def model_flag_launches(
    launches: Mapping[str, tuple[str, str]], *args: str
) -> list[tuple[dict[str, Any], str, list[str]]]:
    """gate_allow_rows' LAUNCHES of a {name: (model, flags)} table: labels {"launch", "model", "flags"}, arguments ARGS
    then the flags split on spaces."""
    return [({"launch": n, "model": m, "flags": f}, m, [*args, *f.split()]) for n, (m, f) in launches.items()]


def audit_ok_rows(
    boxes: Iterable[Box],
    releases: Sequence[str],
    facts: Callable[[Box, str], Path],
    *,
    pop: str = "b",
    labels: Callable[[Box], dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """`audit --facts F --format json` of FACTS(box, release) for each box and release in order: one row per distinct
    (box's LABELS ({"box": box} unless given), feature, its reasons' rule / observed / result) whose status is ok,
    labelled with the first release that gives it; each box's running count printed to stderr."""
    seen: dict[str, dict[str, Any]] = {}
    for box in boxes:
        tags = labels(box) if labels is not None else {"box": box}
        for rel in releases:
            doc = stackcheck_json(["audit", "--facts", str(facts(box, rel)), "--format", "json"])
            for f in doc.get("features") or []:
                if f.get("status") != "ok":
                    continue
                reasons = [[r.get("rule"), r.get("observed"), r.get("result")] for r in f.get("reasons") or []]
                row = {"pop": pop, **tags, "feature": f.get("id"), "reasons": reasons}
                seen.setdefault(json.dumps(row, sort_keys=True), {**row, "sglang": rel})
        print(f"{pop} {' '.join(str(v) for v in tags.values())}: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def plan_steps(plan: dict[str, Any]) -> list[list[Any]]:
    """A plan's steps as [component, to, commands]."""
    return [[s.get("component"), s.get("to"), s.get("commands")] for s in plan.get("steps") or []]


def plan_rows(
    boxes: Iterable[tuple[dict[str, Any], Path]], releases: Sequence[str], *, errors: bool = False
) -> list[dict[str, Any]]:
    """`plan --facts F [--to sglang==R] --format json` for each (labels, facts file) of BOXES in order, with no option
    and with each of RELEASES: one row per distinct (labels, option, target, steps); with ERRORS the verb's one-line
    error too (stackcheck_json_or_error: an error is a row, not a stop)."""
    run = stackcheck_json_or_error if errors else stackcheck_json
    seen: dict[str, dict[str, Any]] = {}
    for tags, path in boxes:
        for opt in [[]] + [["--to", f"sglang=={r}"] for r in releases]:
            doc = run(["plan", "--facts", str(path), *opt, "--format", "json"])
            plan = doc.get("plan") or {}
            row = {"pop": "p", **tags, "option": " ".join(opt), "target": plan.get("target"), "steps": plan_steps(plan)}
            if errors:
                row["error"] = doc.get("error")
            seen.setdefault(json.dumps(row, sort_keys=True), row)
    print(f"p: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def sglang_jit_reads(spec: Mapping[str, Any]) -> bool:
    """Whether SGLang's own JIT (0.5.9+) reads a host of factcheck38_draw's shape: NVCC_CCBIN set or a PATH other
    than the standard one (was factcheck42 and 43's _sglang_reads)."""
    from factcheck38_draw import STD_PATH

    return "NVCC_CCBIN" in spec["env"] or spec["env"].get("PATH") != STD_PATH


def lay_jit_host(out: Path, toolkit: str, host: str, spec: Mapping[str, Any]) -> None:
    """factcheck38_draw._root's layout of TOOLKIT and HOST (SPEC registered under HOST for factcheck38 and 39's
    boxes), then SPEC's "bodies" (script texts or bytes), "copies" (this machine's real gcc driver copied), "clangs"
    (ELF files written by tests/elfwriter.py needing LLVM N's libraries) and "cuda_link" (/usr/local/cuda -> the
    toolkit's home) (was factcheck42 and 43's _lay)."""
    import shutil

    import factcheck39_draw
    from elfwriter import write_so
    from factcheck38_draw import HOSTS, _root, _touch

    HOSTS.setdefault(host, dict(spec))
    factcheck39_draw.F_HOSTS.setdefault(host, dict(spec))
    root = _root(out, toolkit, host)
    for rel_path, body in spec.get("bodies", {}).items():
        _touch(root / rel_path, body if isinstance(body, bytes) else body.encode())
    for rel_path in spec.get("copies", {}):
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(real_gcc(), root / rel_path)
    for rel_path, llvm in spec.get("clangs", {}).items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        write_so(root / rel_path, needed=[f"libclang-cpp.so.{llvm}.1", f"libLLVM.so.{llvm}.1", "libc.so.6"])
        (root / rel_path).chmod(0o755)
    major, minor = toolkit.split(".")[:2]
    if spec.get("cuda_link") and not (root / "usr/local/cuda").is_symlink():
        import os

        os.symlink(f"cuda-{major}.{minor}", root / "usr/local/cuda")


def real_gcc() -> str:
    """This machine's gcc driver (the file its `gcc` resolves to: Debian 12's x86_64-linux-gnu-gcc-12, gcc 12.2.0)
    (was factcheck43's _real_gcc)."""
    import shutil

    found = shutil.which("gcc")
    if found is None:
        raise SystemExit("no gcc on this machine")
    return str(Path(found).resolve())


def jit_host_rows(
    out: Path, hosts: Mapping[str, Mapping[str, Any]], toolkits: Sequence[str], keys: tuple[str, ...], *, pop: str
) -> list[dict[str, Any]]:
    """The gate's allows of `--tp 1` (Llama 3) on factcheck27's H200 box for each toolkit of TOOLKITS and host of
    HOSTS (laid out by lay_jit_host): every final release 0.5.1-0.5.8 (FlashInfer's own JIT, factcheck39_draw's box)
    and, for the hosts SGLang's JIT reads (sglang_jit_reads), every second one 0.5.9-0.5.23 (factcheck38_draw's box):
    one row {"pop": POP, "sglang", "toolkit", "host", "env", "jit": the jit keys starting with one of KEYS, less the
    *dirs ones} per allow; each host's running count printed to stderr (was factcheck42 and 43's host_rows)."""
    import factcheck38_draw
    import factcheck39_draw
    from gate_cli import LLAMA3

    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for toolkit in toolkits:
        for host, spec in hosts.items():
            lay_jit_host(out, toolkit, host, spec)
            releases = releases_between((0, 5, 1), (0, 5, 8))
            if sglang_jit_reads(spec):
                releases += releases_between((0, 5, 9), (0, 5, 23))[::2]
            for rel in releases:
                if release_tuple(rel) <= (0, 5, 8):
                    path = factcheck39_draw._fjit_box(out, rel, toolkit, host)
                else:
                    path = factcheck38_draw._jit_box(out, rel, toolkit, host)
                if stackcheck_json_or_error(gate_line(out, path, "--tp", "1")).get("decision") == "allow":
                    jit = json.loads(path.read_text())["facts"]["jit"]
                    read = {k: jit[k] for k in sorted(jit) if k.startswith(keys) and not k.endswith("dirs")}
                    base = {"pop": pop, "sglang": rel, "toolkit": toolkit, "host": host, "env": spec["env"]}
                    rows.append({**base, "jit": read})
            print(f"{pop} {toolkit} {host}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def nccl_wheel_so(lib: Path, wheel: str) -> Path:
    """LIB written with the libnccl.so.2 of WHEEL (a file name in factcheck38_draw.WHEELS) (was factcheck42 and 43's
    _so for a wheel)."""
    import zipfile

    from factcheck38_draw import WHEELS

    with zipfile.ZipFile(WHEELS / wheel) as z:
        lib.write_bytes(z.read("nvidia/nccl/lib/libnccl.so.2"))
    return lib


def nccl_so_path_rows(
    out: Path,
    rel: str,
    libs: Iterable[str],
    so: Callable[[Path, str], Path],
    base: Callable[[Path, str], dict[str, Any]],
    *,
    name: str,
    pop: str,
) -> list[dict[str, Any]]:
    """The gate's allows of `--tp 8 --enable-symm-mem` on BASE(out, rel) with SGLANG_NCCL_SO_PATH naming SO(out, lib)
    for each lib of LIBS (the real probe's nccl_so_path keys; the facts written as OUT/boxes/NAME-REL-LIB.json): one
    row {"pop": POP, "sglang": REL, "lib", "jit": the nccl_so_path_* keys} per allow (was factcheck42's symm_rows
    library loop and factcheck43's nso_rows)."""
    from stackcheck.probes.jit import nccl_so_path
    from stackcheck.readers.fsview import HostView

    rows: list[dict[str, Any]] = []
    for lib in libs:
        doc = base(out, rel)
        doc["facts"]["jit"].update(nccl_so_path({"SGLANG_NCCL_SO_PATH": str(so(out, lib))}, HostView("/")))
        path = write_box(out, doc, f"{name}-{rel}-{lib}.json")
        if stackcheck_json_or_error(gate_line(out, path, "--tp", "8", "--enable-symm-mem")).get("decision") == "allow":
            jit = doc["facts"]["jit"]
            read = {k: v for k, v in jit.items() if k.startswith("nccl_so_path") and k != "nccl_so_path"}
            rows.append({"pop": pop, "sglang": rel, "lib": lib, "jit": read})
    return rows
