"""Whether torchao's own __init__ loads its compiled libraries (torchao/_C*.so) under the installed torch, and
whether that load aborts the process (igap25; the check extension-torch-abi-torchao, rules torchao-load-gate and
torchao-abi-abort).

Read in the torchao wheels 0.9.0-0.18.0 (torchao/__init__.py of each; 2026-12-05):

- 0.9.0-0.12.0 have no gate: every import of torchao runs torch.ops.load_library on its _C*.so inside a try that
  catches Exception (0.9.0-0.11.0 :29, 0.12.0 :28-29 a loop).
- 0.13.0 skips them where `str(torch.__version__) >= "2.9"` (:38): a string comparison, so torch 2.10 and 2.11
  ('2.10.0' < '2.9') load them again (:51).
- 0.14.0 loads them only for torchao 0.13.0 under torch 2.8.0 or 0.14.0.dev under 2.9.0.dev (:70-76): never for
  itself.
- 0.14.1, 0.15.0 and 0.16.0 load them only for a (torchao, torch) pair of their table, compared as [major, minor,
  patch] with -1 for a dev or git build (0.14.1 :64-82, 0.15.0 :70-95, 0.16.0 :70-100).
- 0.17.0 and 0.18.0 load them for torch >= 2.11.0 (:71-76; 0.18.0 :72-73).
- A local build ('+git' or 'unknown' in torchao's version) skips the test and loads them (0.13.0 :30, 0.14.1+ :60).

A load that fails with an exception (an undefined symbol: OSError from dlopen) is caught, so torchao goes on
without its kernels (the per-file rule torch-symbols, effect degraded). But a library built against torch 2.8 or
earlier whose symbols all resolve under torch 2.9 or later aborts the process inside load_library ('Fatal Python
error: Aborted': pytorch/ao#2901, pytorch/pytorch#160657; pytorch/ao PR #2908 states it for every .so built with
torch 2.8 and imported under 2.9+): no try catches an abort, so the import of torchao ends the process. Which torch
each release is built against: 0.13.0's __init__.py:31 says 2.8.0; 0.14.1's table :65-72 says 2.8.0 for 0.14.0 and
2.9.0 for 0.14.1; 0.16.0's :77-81 2.9.1 for 0.15.0 and 2.10.0 for 0.16.0; for 0.9.0-0.12.0 it is inferred from
their symbols (0.12.0's _C.abi3.so resolves every torch symbol only in torch 2.8.0's libraries, needing
c10::cuda::SetDevice(signed char, bool), which 2.7.1 lacks; 0.10.0 and 0.11.0 only in 2.7.1's; 0.9.0 in none of
2.7.1-2.11.0): all before 2.9. 0.17.0's and 0.18.0's libraries need no symbol of torch's C++ API.

Read against the torch wheels 2.7.1, 2.8.0, 2.9.1, 2.10.0 and 2.11.0 (tests/launch/
test_gate_torchao_abort_registry.py): torchao 0.13.0 under 2.10.0 and 2.11.0, loaded by the string test, misses
c10::cuda::c10_cuda_check_implementation(int, const char*, const char*, int, bool) in every file (a caught
OSError: its kernels are lost, no abort); the one pair that loads libraries resolving in full across 2.9 is
torchao 0.12.0 under torch 2.9 (_C.abi3.so and _C_cutlass_100a.abi3.so): the abort."""

from __future__ import annotations

import re
from collections.abc import Mapping

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.types import Reason

GATE_SOURCE: dict[str, str] = {
    "title": "torchao 0.9.0-0.18.0 wheels, torchao/__init__.py: no gate, load_library inside try/except Exception "
    "(0.9.0-0.11.0 :29, 0.12.0 :28-29); 0.13.0 :38 skips where str(torch.__version__) >= '2.9' (a string "
    "comparison), else loads at :51; 0.14.0 :70-76 loads only for (0.13.0, 2.8.0) or (0.14.0.dev, 2.9.0.dev); "
    "0.14.1 :64-82, 0.15.0 :70-95, 0.16.0 :70-100 load only for a pair of their compatibility table; 0.17.0 "
    ":71-76 and 0.18.0 :72-73 load for torch >= 2.11.0 (read 2026-12-05)",
    "url": "https://pypi.org/project/torchao/0.13.0/",
}
ABORT_SOURCE: dict[str, str] = {
    "title": "pytorch/ao#2901 and PR #2908 (a torchao .so built with torch 2.8 aborts the process in "
    "torch.ops.load_library under torch 2.9+), pytorch/pytorch#160657 (the same abort under a 2.9 nightly); "
    "torchao 0.13.0 __init__.py:31 (built with torch 2.8.0), 0.14.1 :65-72 and 0.16.0 :77-81 (the torch each "
    "later release is built against); 0.9.0-0.12.0 inferred from which torch wheel's libraries resolve their "
    "symbols (read 2026-12-05)",
    "url": "https://github.com/pytorch/ao/pull/2908",
}
#: releases without a gate (their __init__.py lines)
_NO_GATE: dict[str, str] = {
    "0.9.0": "__init__.py:29",
    "0.10.0": "__init__.py:29",
    "0.11.0": "__init__.py:29",
    "0.12.0": "__init__.py:28-29",
}
#: releases whose compatibility table decides: the torch versions it lists for the release itself (its other rows
#: name other torchao versions, which an installed release never parses equal to; 0.14.0 lists none for itself)
_PAIRS: dict[str, tuple[str, list[str]]] = {
    "0.14.0": ("__init__.py:70-76", []),
    "0.14.1": ("__init__.py:64-82", ["2.9.0", "2.10.0.dev"]),
    "0.15.0": ("__init__.py:70-95", ["2.9.1", "2.10.0.dev"]),
    "0.16.0": ("__init__.py:70-100", ["2.10.0", "2.11.0.dev"]),
}
#: releases whose libraries are built against a torch before 2.9 (the abort side), and how that is known
BUILT_BEFORE_29: dict[str, str] = {
    "0.9.0": "inferred: its _C.abi3.so resolves in none of torch 2.7.1-2.11.0",
    "0.10.0": "inferred: its _C.abi3.so resolves in full only in torch 2.7.1's libraries",
    "0.11.0": "inferred: its _C.abi3.so resolves in full only in torch 2.7.1's libraries",
    "0.12.0": "inferred: its libraries resolve in full only in torch 2.8.0's (c10::cuda::SetDevice(signed char, "
    "bool), absent from 2.7.1)",
    "0.13.0": "built with torch 2.8.0 (its __init__.py:31)",
    "0.14.0": "built with torch 2.8.0 (0.14.1's __init__.py:65-68)",
}


def parse_version(text: str) -> list[int] | None:
    """torchao's _parse_version: [major, minor, patch], patch -1 where the string says git or dev; None where it
    has no major.minor.patch (torchao raises ValueError there)."""
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", text)
    if m is None:
        return None
    out = [int(g) for g in m.groups()]
    if re.search(r"(git|dev)", text):
        out[2] = -1
    return out


def _release(torchao: str) -> str:
    return torchao.split("+", 1)[0]


def loads(torchao: str, torch: str) -> tuple[bool | None, str]:
    """Whether torchao `torchao`'s __init__ loads its _C*.so under torch `torch` (both as their __version__
    reads), and where that is decided; None: a release not read, or a version torchao cannot parse."""
    release = _release(torchao)
    if release in _NO_GATE:
        return True, f"torchao {release} has no gate: {_NO_GATE[release]} loads them whatever the torch"
    known = release in _PAIRS or release in ("0.13.0", "0.17.0", "0.18.0")
    if not known:
        return None, f"torchao {torchao}'s __init__.py was not read"
    if "+git" in torchao or "unknown" in torchao:
        return True, f"torchao {torchao} is a local build: its __init__.py loads them without a version test"
    if release == "0.13.0":
        skip = torchao.startswith("0.13.0") and torch >= "2.9"
        word = ">=" if skip else "<"
        return not skip, f"__init__.py:38 compares strings: '{torch}' {word} '2.9'"
    t, ao = parse_version(torch), parse_version(torchao)
    if t is None or ao is None:
        return None, f"torch {torch} or torchao {torchao} has no major.minor.patch torchao can parse"
    if release in ("0.17.0", "0.18.0"):
        ok = t >= [2, 11, 0]
        where = "71-76" if release == "0.17.0" else "72-73"
        return ok, f"__init__.py:{where} loads them for torch >= 2.11.0 ({torch}: {'yes' if ok else 'no'})"
    where, listed = _PAIRS[release]
    own = ao == parse_version(release)  # a dev or git torchao parses with patch -1: none of the rows
    ok = own and any(t == parse_version(v) for v in listed)
    return ok, f"{where}: its table lists torch {', '.join(listed) or 'none'} for torchao {release}"


TRANSFORMERS_SOURCE: dict[str, str] = {
    "title": "sglang 0.5.9 / 0.5.14 / 0.5.23 wheels: models/registry.py imports every module of sglang.srt.models on "
    "each launch (0.5.9 :128-129, 0.5.14 :130-131, 0.5.23 :153-159), some at module level import transformers' "
    "PreTrainedModel (0.5.9 models/gemma3_mm.py:25); transformers 4.57.1 modeling_utils.py:73-74 imports its "
    "quantizers (quantizers/auto.py:62 imports quantizer_torchao.py), also reached outside the registry: "
    "scheduler.py:213 (0.5.9) imports utils/hf_transformers_utils.py, whose `from transformers import AutoProcessor` "
    "(:36; 0.5.10 :56-57) imports processing_utils.py, which imports modeling_utils where torch is installed "
    "(4.57.1 :74-75, 5.3.0 :79, 5.19.0 :85), no try; and 4.57.0, 4.57.1 and 4.57.6 "
    "quantizer_torchao.py:38-39 run `import torchao` where torchao >= 0.4.0 is installed (import_utils.py:122); "
    "4.51.0, 4.51.3, 4.53.3, 4.55.2, 4.56.0 and 4.56.2 import it in modeling_utils.py itself, at module level, where "
    "torchao >= 0.4.0 is installed: `from torchao.quantization import Int4WeightOnlyConfig` (4.51.0 :52-53, 4.53.3 "
    ":49-50, 4.55.2 :50-51, 4.56.0 and 4.56.2 :128-129; their quantizer_torchao.py imports it only inside functions, "
    ":66-67; ifc41; 4.48.3, 4.49.0 and 4.50.3 do not); 5.0.0 and 5.3.0 (:39-41) only "
    "for torchao >= 0.15.0, 5.6.0, 5.8.1, 5.12.1 and 5.19.0 (:40-42) only where torchao >= 0.15.0 "
    "(TORCHAO_MIN_VERSION) (read 2026-12-05)",
    "url": "https://pypi.org/project/transformers/4.57.1/",
}


def transformers_imports_torchao(ctx: Context) -> tuple[bool | None, str]:
    """Whether every SGLang launch imports torchao through transformers (TRANSFORMERS_SOURCE: SGLang's model registry
    imports transformers.modeling_utils, which imports torchao.quantization at module level in transformers
    4.51-4.56, whose quantizers import torchao at module level in 4.57, and in 5.x for a torchao >= 0.15.0), and why;
    None where transformers' version was not read (SGLang requires transformers, so it is not taken for absent), False
    where it is read not to (or nothing launches SGLang)."""
    from stackcheck.facts.versions import version_in

    if ctx.installed_version("sglang") is None:
        return False, ""
    transformers, torchao = ctx.installed_version("transformers"), ctx.installed_version("torchao")
    if transformers is None:
        entry = ctx.package("transformers")  # (a list that does not name it says nothing: the probe did not look)
        if entry is not None and entry.get("installed") is False:
            return False, ""
        return None, (
            "transformers' version was not read, and transformers 4.51-4.57 import torchao at module level "
            "(4.56.2 modeling_utils.py:128-129, 4.57.1 quantizer_torchao.py:38-39), which SGLang's model registry "
            "imports on every launch"
        )
    recent = version_in(transformers, ">=4.51")
    if recent is None:
        return None, f"transformers {transformers!r} is no version read; 4.51-4.57 import torchao on every launch"
    if recent is False:
        if version_in(transformers, ">=4.51.0.dev0") is True:  # (a build before 4.51.0's release: 4.51.0.dev0, rc1)
            return None, (
                f"transformers {transformers} is a build before 4.51.0's release: whether its modeling_utils.py "
                "imports torchao at module level (4.51.0 :52-53 does, 4.50.3 does not) is not read"
            )
        return False, ""
    from stackcheck.facts.versions import version_in_settled

    # (0.15.0rc1 is not >=0.15 by PEP 440 but may have 0.15.0's code: not known, so not taken for an older torchao)
    new_ao = version_in_settled(torchao, ">=0.15") if torchao is not None else None
    if version_in(transformers, ">=5") is True and new_ao is False:
        return False, ""
    where = (
        "modeling_utils.py imports torchao.quantization, 4.56.2 :128-129"
        if version_in(transformers, "<4.57") is True
        else "quantizer_torchao.py:38-39 in 4.57; 5.x for torchao >= 0.15.0"
    )
    return True, (
        f"transformers {transformers} imports torchao at module level ({where}), and SGLang's model registry "
        "imports it on every launch (models/registry.py, transformers.modeling_utils), --torchao-config or not"
    )


def _imported_here(ctx: Context, loads_here: bool) -> tuple[bool, str]:
    """(whether this launch imports torchao: its flag or SGLang release, `loads_here`, or transformers on every
    launch; the transformers part of why, '' where it adds nothing)."""
    if loads_here:
        return True, ""
    via, why = transformers_imports_torchao(ctx)
    return (via is not False), (f" ({why})" if via is not False else "")


def gate_reasons(
    ctx: Context, reasons: list[Reason], entries: list[Mapping[str, Any]], torch: str, loads_here: bool
) -> list[Reason]:
    """The check's reasons for torchao's libraries `entries` (facts.kernel_symbols.extensions, read against
    torch `torch`), given the per-file `reasons` already made: replaced by one pass where torchao's gate does not
    load them (nothing loads, so nothing aborts or fails to resolve); with a failing reason added where it loads,
    across torch 2.9, a library built before 2.9 whose torch symbols all resolve (the abort; effect crash where
    this launch imports torchao, `loads_here`, else information, degraded). Unchanged where the versions are not
    known or the release was not read."""
    torchao = ctx.installed_version("torchao")
    if torchao is None or not torch or not entries:
        return reasons
    load, why = loads(torchao, torch)
    paths = ", ".join(str(e.get("path")) for e in entries)
    if load is False:
        return [
            {
                "rule": "torchao-load-gate",
                "result": "pass",
                "requirement": "torchao's __init__ loads its compiled libraries only under a torch they work with",
                "observed": f"torchao {torchao}, torch {torch}: not loaded",
                "source": [GATE_SOURCE],
                "message": f"torchao {torchao} does not load its compiled libraries under torch {torch} ({why}); it "
                f"logs 'Skipping import of cpp extensions' and goes on: none of {paths} is opened, so none can "
                "abort or fail to resolve. Its C++ kernels are absent, and the configs SGLang builds from "
                "--torchao-config call none of them (rule torchao-config)",
            }
        ]
    from stackcheck.facts.versions import minor_of

    release, minor = _release(torchao), minor_of(torch)
    if load is not True or release not in BUILT_BEFORE_29 or minor is None or minor < (2, 9):
        return reasons
    whole = [e for e in entries if e.get("torch_missing_count") == 0]
    if not whole:
        return reasons  # every file fails to resolve: dlopen raises OSError, which torchao catches (degraded)
    shown = ", ".join(str(e.get("path")) for e in whole)
    loads_here, via = _imported_here(ctx, loads_here)
    effect = "crash" if loads_here else "degraded"
    where = via if loads_here else " (no launch here imports torchao, so this is information only)"
    return [
        *reasons,
        {
            "rule": "torchao-abi-abort",
            "result": "fail",
            "effect": effect,
            "requirement": "a torchao library that torchao loads was built against this torch's side of 2.9",
            "observed": f"torchao {torchao} ({BUILT_BEFORE_29[release]}) loads {shown} under torch {torch}",
            "required": "torchao's libraries built against torch 2.9 or later, or not loaded",
            "source": [GATE_SOURCE, ABORT_SOURCE, *([TRANSFORMERS_SOURCE] if via else [])],
            "message": f"torchao {torchao} loads its compiled libraries under torch {torch} ({why}), and they are "
            f"built against a torch before 2.9 ({BUILT_BEFORE_29[release]}): {shown} resolve every torch "
            "symbol, so the loader opens them, and a torchao library built against torch 2.8 or earlier aborts "
            "the process inside torch.ops.load_library under torch 2.9 or later ('Fatal Python error: Aborted'; "
            f"no try catches an abort), so the import of torchao ends the launch{where}. Install the torchao "
            "built for this torch (0.14.1 for torch 2.9.0, 0.15.0 for 2.9.1), or torchao 0.13.0, which skips "
            "its libraries under torch 2.9, or torch 2.8",
        },
    ]


#: (torchao release, torch major.minor) where the release's gate loads its libraries and the wheels' reading found
#: one resolving in full across torch 2.9 (the abort): judged from the versions alone where no file was read (an
#: image, a hand-written facts document, a probe without the kernel symbol section)
READ_ABORTS: dict[tuple[str, tuple[int, int]], str] = {
    ("0.12.0", (2, 9)): "torchao 0.12.0's _C.abi3.so and _C_cutlass_100a.abi3.so resolve every torch symbol in torch "
    "2.9.1's libraries (the kernel symbol probe on the wheels, tests/launch/test_gate_torchao_abort_registry.py)",
}


def read_abort_reasons(ctx: Context, loads_here: bool) -> list[Reason]:
    """Rule torchao-abi-abort from the installed versions alone (no library was read): a failing reason where the
    pair is one the wheels were read to abort in (READ_ABORTS) and the release's gate loads its libraries; []
    otherwise (the check's other rules, or its skip, say the rest)."""
    torchao, torch = ctx.installed_version("torchao"), ctx.installed_version("torch")
    if torchao is None or torch is None:
        return []
    from stackcheck.facts.versions import minor_of

    release, minor = _release(torchao), minor_of(torch)
    read = READ_ABORTS.get((release, minor)) if minor is not None else None
    load, why = loads(torchao, torch)
    if read is None or load is not True:
        return []
    loads_here, via = _imported_here(ctx, loads_here)
    where = via if loads_here else " (no launch here imports torchao, so this is information only)"
    return [
        {
            "rule": "torchao-abi-abort",
            "result": "fail",
            "effect": "crash" if loads_here else "degraded",
            "requirement": "a torchao library that torchao loads was built against this torch's side of 2.9",
            "observed": f"torchao {torchao} ({BUILT_BEFORE_29[release]}), torch {torch}; no library read here",
            "required": "torchao's libraries built against torch 2.9 or later, or not loaded",
            "source": [GATE_SOURCE, ABORT_SOURCE, *([TRANSFORMERS_SOURCE] if via else [])],
            "message": f"torchao {torchao} loads its compiled libraries under torch {torch} ({why}), and they are "
            f"built against a torch before 2.9 ({BUILT_BEFORE_29[release]}); no file of this install was read (no "
            f"kernel symbol section), but the release's wheel was: {read}, so the loader opens them and the process "
            "aborts inside torch.ops.load_library ('Fatal Python error: Aborted'; no try catches an abort): the "
            f"import of torchao ends the launch{where}. Install the torchao built for this torch (0.14.1 for torch "
            "2.9.0, 0.15.0 for 2.9.1), or torchao 0.13.0, which skips its libraries under torch 2.9, or torch 2.8",
        }
    ]


def fbgemm_loading(torchao: str | None, kind: str, table: object) -> tuple[bool | None, str]:
    """Whether torchao `torchao` loads fbgemm-gpu-genai's library for a launch whose --torchao-config picks `kind`
    ("": no flag), and why, by the check's table (checks.json extension-torch-abi-torchao extension.library_loads:
    the releases read to load it, per kind, each with why): True, False (it does not, or the release was not read),
    None where the version is a pre-release or dev build of a release that loads it for `kind` while the release
    before does not, or the other way round (facts/versions.py settled), or where the check gives no table (a site's
    own check: not known, never taken as not loaded)."""
    if torchao is None:
        return False, "torchao's version is not given"
    rows = table.get("releases") if isinstance(table, Mapping) else None
    if not isinstance(rows, list):
        return None, "the check gives no table of the torchao releases that load it (extension.library_loads)"
    from stackcheck.facts.versions import settled

    release = _release(torchao)
    straddled = None
    for row in rows:
        if not isinstance(row, Mapping):  # (the schema's shape: checked as manifests load)
            return None, "the check's table of the torchao releases that load it is not readable"
        kinds, spec, why = row.get("kinds"), str(row.get("versions")), str(row.get("why"))
        if isinstance(kinds, list) and kind not in kinds:
            continue
        holds, final = settled(release, spec)
        if final is not None:
            straddled = straddled or (final, why)
        elif holds is True:
            return True, why.replace("{torchao}", release).replace("{kind}", kind)
    if straddled is not None:
        final, why = straddled
        reason = why.replace("{torchao}", final).replace("{kind}", kind)
        return None, (f"torchao {torchao} is a pre-release or dev build of {final}, whose code is {final}'s or the "
                      f"release's before it: which is not known, and {reason}")  # fmt: skip
    return False, f"torchao {torchao} was not read to load it for this launch"


def fbgemm_reasons(
    ctx: Context, entries: list[Mapping[str, Any]], torch: str, loads_here: bool, table: object
) -> list[Reason]:
    """fbgemm-gpu-genai's library (facts.kernel_symbols.extensions, extension fbgemm_gpu_genai) where the launch's
    torchao loads it (fbgemm_loading, by the check's `table`, whose sources the reasons cite): a failing reason
    (crash: `import fbgemm_gpu` re-raises the OSError, outside any try of torchao's on these paths) per file missing
    a torch symbol, a pass per file that resolves, unknown per file not read; [] where torchao does not load it here.
    An audit, or a launch without --torchao-config on an SGLang that imports torchao only for it, states a failure as
    information (degraded)."""
    from stackcheck.verdicts.torchao_config import config_kind

    if not entries:
        return []
    value = ctx.launch.get("torchao_config")
    kind = config_kind(value, ctx.installed_version("sglang"))[0] if isinstance(value, str) and value else ""
    torchao = ctx.installed_version("torchao")
    loaded, why = fbgemm_loading(torchao, kind, table)
    listed = table.get("source") if isinstance(table, Mapping) else None
    sources = [x for x in listed if isinstance(x, dict)] if isinstance(listed, list) else []
    if loaded is False:
        return []
    loads_here, via = _imported_here(ctx, loads_here)  # (torchao 0.15.0 imported through transformers: irev58)
    out: list[Reason] = []
    for e in entries:
        path, count = e.get("path"), e.get("torch_missing_count")
        base: Reason = {
            "rule": "fbgemm-genai-symbols",
            "requirement": f"every torch symbol {path} needs is exported by torch's libraries",
            "source": [*sources, *([TRANSFORMERS_SOURCE] if via else [])],
        }
        if not isinstance(count, int):
            out.append({**base, "result": "unknown", "message": f"{path}: {e.get('error') or e.get('torch_error')}"})
            continue
        if count == 0:
            out.append({**base, "result": "pass", "message": f"{path} resolves every torch symbol in torch {torch}"})
            continue
        missing = [str(m) for m in e.get("torch_missing") or []]
        if loaded is None:
            out.append({**base, "result": "unknown", "observed": f"{count} torch symbols missing",
                        "message": f"fbgemm-gpu-genai's {path} needs {count} torch symbol{'s' if count > 1 else ''} "
                        f"torch {torch} does not export ({', '.join(missing[:2])}), and whether this launch loads it "
                        f"is not known: {why}"})  # fmt: skip
            continue
        where = via if loads_here else " (no launch here imports torchao, so this is information only)"
        out.append(
            {
                **base,
                "result": "fail",
                "effect": "crash" if loads_here else "degraded",
                "observed": f"{count} torch symbols missing",
                "required": "0 missing",
                "message": f"{why}, and fbgemm-gpu-genai's {path} needs {count} torch symbol"
                f"{'s' if count > 1 else ''} torch {torch} does not export ({', '.join(missing[:2])}): "
                "'import fbgemm_gpu' re-raises the OSError 'undefined symbol' (on the int4wo path torchao catches "
                "it and raises 'ImportError: Requires fbgemm-gpu-genai >= 1.2.0' as it quantizes), so the model "
                f"load fails{where}. Install the fbgemm-gpu-genai release built for this torch "
                "(FBGEMM's table: 1.3 for torch 2.8, 1.4 for 2.9, 1.5 for 2.10), or uninstall it",
            }
        )
    return out
