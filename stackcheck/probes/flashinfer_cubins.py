"""FlashInfer's run-time cubins: whether the trtllm-gen kernels a launch on GPU major 10 reaches are on the box.

FlashInfer (0.5.0-0.7.x) fetches its trtllm-gen cubins (FMHA, BMM, GEMM, DeepGEMM families) at the first kernel of
a family, from ONE directory fixed when `flashinfer.jit.env` is imported (`FLASHINFER_CUBIN_DIR`), with no
per-file fallback. `_get_cubin_dir` picks it (read in the wheels):

- 0.5.0-0.6.15.post1 (0.6.0 flashinfer/jit/env.py:59-91): the flashinfer-cubin package when installed (a version
  other than flashinfer's raises at import unless FLASHINFER_DISABLE_VERSION_CHECK), else $FLASHINFER_CUBIN_DIR,
  else `$FLASHINFER_WORKSPACE_BASE (default: the home directory)/.cache/flashinfer/cubins` (:51-55);
- 0.6.16-0.7.1 (0.6.16 env.py:66-107, 0.7.1 :74-115): $FLASHINFER_CUBIN_DIR first, then the package (a mismatch
  raises), then the cache;
- 0.7.2+ (0.7.2 env.py:79-132): the variable, then the package only where its version matches (else a warning
  'Ignoring incompatible flashinfer-cubin package' :123 and the cache).

Each artifact is `<dir>/<ArtifactPath.F><name>`; a file missing there is downloaded from
$FLASHINFER_CUBINS_REPOSITORY (0.6.0 jit/cubin_loader.py:32, get_cubin :192), unless FLASHINFER_NO_DOWNLOAD is set
(0.6.8+, get_artifact: 0.6.8 cubin_loader.py:214, 0.7.2 :221): RuntimeError 'Artifact not found locally'. A
family's manifest is `<ArtifactPath.F>checksums.txt` ("sha256 name" per line), whose own sha256 is
`CheckSumHash.F` (flashinfer/artifacts.py).

This probe reads files only (no import of flashinfer, no network, no hashing of cubins): flashinfer/artifacts.py
with ast, each family's checksums.txt (small, capped) and one listing of each directory its names lie in. The
server's environment is the launch's (`ctx.loader_environ`), relative paths are read from `gate --cwd`'s directory.
Per family `ready.F`: true where the manifest is there (its sha256 matching), every file it lists is present and
their names are loadable files (a regular, non-empty file; "files": "present, unverified" says their sha256, which
the loader checks, is not: see probe_cubins); false where the manifest is missing (or wrong) or every listed file is,
and FLASHINFER_NO_DOWNLOAD is set on a release that reads it (the first kernel of the family raises), or no fetch
can succeed (a local FLASHINFER_CUBINS_REPOSITORY lacking them, a file:// one); null otherwise, with
`ready_reason.F` (a download would be tried, which needs the network: not read; or some files missing, and which
of them a kernel needs is only known from the downloaded meta-info header). CUDNN_SDPA (no checksums.txt) is read
by the three names its launcher source fetches; a local FLASHINFER_CUBINS_REPOSITORY is read as a second place
(download_file copies from a path, no network): ready where it holds the whole family and the cubin directory is
writable.

Every rule that reads `ready.F` is for GPUs of compute capability 10.x (cubin_releases.CUBIN_GPU_MAJORS), so where
every GPU the verdicts judge is read and of another major (families_unread_for: NVML's, or --host-facts'; not
under --assume-gpu, whose GPUs come after probing) no family is read at all: each `ready.F` null with the reason
(`families_unread`), unknown to any rule that reads it (iperf43: the per-name check of a kept answer, ~47 ms CPU on
flashinfer-cubin 0.6.13's 16,004 names, is left out on an H200 box).
"""

from __future__ import annotations

import os
import posixpath
import stat as stat_module
from collections.abc import Mapping

from stackcheck.facts.cubin_releases import (
    CUBIN_GPU_MAJORS,
    FIRST_READ,
    LAST_READ,
    NO_DOWNLOAD_FROM,
    RUBIN_SPLIT,
    release_tuple,
)
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult, view_of
from stackcheck.readers.fsview import FileView

if TYPE_CHECKING:
    from typing import Any, ClassVar

#: the families this probe reads (flashinfer/artifacts.py ArtifactPath; the ones the flashinfer-cubin wheel holds)
FAMILIES: tuple[str, ...] = ("TRTLLM_GEN_FMHA", "TRTLLM_GEN_BMM", "TRTLLM_GEN_GEMM", "DEEPGEMM")
#: ArtifactPath.CUDNN_SDPA (every release 0.5.0-0.7.4) has no checksums.txt: the JIT module fmha_cudnn_gen
#: (jit/attention/modules.py gen_cudnn_fmha_module) compiles data/csrc/cudnn_sdpa_kernel_launcher.cu, whose
#: init_cudnn_cubin fetches three named cubins with their sha256 through the cubin callback (0.6.0 :89-97, 0.7.2
#: :86-98), all three at the first cuDNN-cubin kernel (call_once, 0.7.2 :100-104). The flashinfer-cubin wheel never
#: holds them (its build downloads the four families above only). Their names are read from that source file.
CUDNN_SDPA = "CUDNN_SDPA"
_CUDNN_LAUNCHER = "flashinfer/data/csrc/cudnn_sdpa_kernel_launcher.cu"
#: ArtifactPath.DSL_FMHA (0.6.10+, per `<cpu>/<sm_XXXa>/`) is loaded only by prefill's backend="cute-dsl"
#: (0.7.2 prefill.py:6341 -> attention/cute_dsl/fmha.py:185); no SGLang 0.5.1-0.5.23 call passes that backend to a
#: FlashInfer prefill (read in the 0.5.14, 0.5.18, 0.5.21 and 0.5.23 wheels: trtllm_mla_backend.py's backend
#: "cute-dsl" (--attention-backend cutedsl_mla) goes to the MLA decode only, 0.5.23 :1036, a CuTe-DSL JIT kernel; the
#: ragged prefill :1082 takes FlashInfer's default trtllm-gen; none before 0.5.14), so it is not read here
#: a family's checksums.txt is read whole: flashinfer-cubin 0.6.13's FMHA one is 2,376,413 bytes (13,453 lines), so
#: the cap leaves room for growth; one over it is "not read" (ready null), never "missing" (irev77)
_MANIFEST_LIMIT = 32 << 20
_ARTIFACTS_LIMIT = 1 << 20
_MAX_FIRST = 3


def parse_artifacts(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """ArtifactPath's and CheckSumHash's string constants of flashinfer/artifacts.py, read with ast (nothing run).
    Raises ValueError where the file does not parse or holds neither class."""
    import ast

    from stackcheck.pyast import parse

    try:
        tree = parse(text, "artifacts.py")
    except (SyntaxError, ValueError) as exc:
        raise ValueError(f"artifacts.py does not parse: {exc}") from None
    classes: dict[str, dict[str, str]] = {"ArtifactPath": {}, "CheckSumHash": {}}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.name not in classes:
            continue
        out = classes[node.name]
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                name, value = item.target.id, item.value
            elif isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
                name, value = item.targets[0].id, item.value
            else:
                continue
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                out[name] = value.value
    if not classes["ArtifactPath"]:
        raise ValueError("artifacts.py has no ArtifactPath string constants")
    return classes["ArtifactPath"], classes["CheckSumHash"]


def cudnn_sdpa_names(text: str) -> list[str]:
    """The cubin names cudnn_sdpa_kernel_launcher.cu fetches (`"cudnn_sm100_fprop_sdpa_prefill_d128_bf16.cubin"` in
    the shape of the releases read); empty where none is found."""
    import re

    return sorted(set(re.findall(r'"(cudnn_[A-Za-z0-9_]+[.]cubin)"', text)))


def repository_kind(value: str | None, cwd: str | None) -> tuple[str, str | None]:
    """(kind, local directory) of FLASHINFER_CUBINS_REPOSITORY as cubin_loader reads it (0.7.2 jit/cubin_loader.py:35,
    get_artifact :230 safe_urljoin, download_file :89-100): unset -> "default" (NVIDIA's https server); http(s) ->
    "url"; any other scheme (file:// included) -> "unfetchable": urljoin keeps the scheme, os.path.exists fails on it
    and requests has no adapter for it (a RequestException each of the 4 tries), so a missing file is never fetched;
    a path -> "local": download_file copies `<path>/<relpath>` where it exists (no network), relative paths from the
    server's working directory (the directory None where that is not known)."""
    if value is None:
        return "default", None
    scheme, sep, _ = value.partition("://")
    if sep:
        return ("url" if scheme.lower() in ("http", "https") else "unfetchable"), None
    if not value:  # safe_urljoin("", rel) is "/rel"
        return "local", "/"
    if value.startswith("/"):
        return "local", posixpath.normpath(value)
    return "local", (posixpath.normpath(posixpath.join(cwd, value)) if cwd else None)


def resolve_dir(
    release: tuple[int, int, int],
    env: Mapping[str, str],
    package: tuple[str, str | None] | None,
    home: str | None,
    cwd: str | None,
    release_text: str = "",
) -> tuple[str | None, str, str | None]:
    """(dir, source, reason) of `_get_cubin_dir` for a release: source "FLASHINFER_CUBIN_DIR", "flashinfer-cubin"
    or "cache"; dir None (with the reason) where it is not known here or the import fails. `package` is the
    flashinfer-cubin package's (cubin directory, version) where it is installed."""
    variable = env.get("FLASHINFER_CUBIN_DIR") or ""
    matches = package is not None and (
        package[1] == release_text or (release_text.startswith("0.0.0+unknown") and release >= (0, 6, 10))
    )
    bypass = bool(env.get("FLASHINFER_DISABLE_VERSION_CHECK"))

    def absolute(path: str, what: str) -> tuple[str | None, str | None]:
        if path.startswith("/"):
            return posixpath.normpath(path), None
        if cwd:
            return posixpath.normpath(posixpath.join(cwd, path)), None
        return None, f"{what} is relative ({path!r}) and the server's working directory is not known (gate --cwd)"

    def cache() -> tuple[str | None, str, str | None]:
        base = env.get("FLASHINFER_WORKSPACE_BASE")
        if base is None:
            if not home:
                return None, "cache", "the server's home directory (HOME) is not known"
            base = home
        if not base:
            return None, "cache", "FLASHINFER_WORKSPACE_BASE is empty (the server's working directory, not known)"
        path, why = absolute(base, "FLASHINFER_WORKSPACE_BASE")
        return (posixpath.join(path, ".cache/flashinfer/cubins") if path else None), "cache", why

    def from_package() -> tuple[str | None, str, str | None]:
        assert package is not None
        if matches or bypass:
            return package[0], "flashinfer-cubin", None
        return (
            None,
            "flashinfer-cubin",
            (
                f"flashinfer-cubin {package[1]} does not match flashinfer-python {release_text}: the import of "
                "flashinfer.jit.env raises (check flashinfer-cubin-match)"
            ),
        )

    if release < (0, 6, 16):
        if package is not None:
            return from_package()
        if variable:
            return (*_with_source(absolute(variable, "FLASHINFER_CUBIN_DIR"), "FLASHINFER_CUBIN_DIR"),)
        return cache()
    if variable:
        return (*_with_source(absolute(variable, "FLASHINFER_CUBIN_DIR"), "FLASHINFER_CUBIN_DIR"),)
    if package is not None:
        if release >= (0, 7, 2) and not (matches or bypass):
            return cache()  # ignored with a warning (0.7.2 env.py:123)
        return from_package()
    return cache()


#: SGLang 0.5.18-0.5.23's `import sglang` (sglang/__init__.py:10-14, before anything imports FlashInfer) runs
#: environ.redirect_third_party_caches: os.environ.setdefault("FLASHINFER_WORKSPACE_BASE", expanduser(SGLANG_CACHE_DIR,
#: default "~/.cache/sglang")) (0.5.18 environ.py:1633-1657, 0.5.20 :1923-1947, 0.5.23 :2312-2336; SGLANG_CACHE_DIR
#: 0.5.18 :991, 0.5.23 :1383; 0.5.17's __init__.py has no such call; 0.5.19, 0.5.21, 0.5.22 call it too; read by ifc62
#: 2026-12-07 in the wheels of the shared cache, not run): the server's FlashInfer cache is
#: ~/.cache/sglang/.cache/flashinfer/cubins, not ~/.cache/flashinfer/cubins, unless FLASHINFER_WORKSPACE_BASE is set
SGLANG_REDIRECT_FROM = (0, 5, 18)


def sglang_workspace_base(sglang: Any, env: Mapping[str, str]) -> tuple[Mapping[str, str], str | None]:
    """(`env` with the FLASHINFER_WORKSPACE_BASE the installed SGLang's import sets where it is unset, why the
    directory is not known). SGLang 0.5.18 on (SGLANG_REDIRECT_FROM; a later release inferred the same) default it to
    expanduser(SGLANG_CACHE_DIR or "~/.cache/sglang"), SGL_CACHE_DIR copied over SGLANG_CACHE_DIR first; an SGLang
    whose release is not known leaves the directory not known; none installed changes nothing."""
    if "FLASHINFER_WORKSPACE_BASE" in env or not isinstance(sglang, Mapping) or not sglang.get("installed"):
        return env, None
    version = sglang.get("version")
    found = release_tuple(version if isinstance(version, str) else None)
    if found is None:
        return env, (f"SGLang {version or '(release not known)'} is installed, and from 0.5.18 on its import "
                     "points FLASHINFER_WORKSPACE_BASE at SGLANG_CACHE_DIR: which cache FlashInfer uses is not "
                     "known")  # fmt: skip
    if found < SGLANG_REDIRECT_FROM:
        return env, None
    from stackcheck.facts.sgl_prefix import sglang_environ

    seen = sglang_environ(env, str(version))[0]
    base = seen.get("SGLANG_CACHE_DIR")
    if base is None:
        base = "~/.cache/sglang"
    if base == "~" or base.startswith("~/"):
        if not env.get("HOME"):
            return env, "the server's home directory (HOME), where SGLang's cache directory lies, is not known"
        base = env["HOME"].rstrip("/") + base[1:] if base != "~" else env["HOME"]
    elif base.startswith("~"):
        return env, f"SGLANG_CACHE_DIR={base!r} names another user's home directory (not read)"
    return {**env, "FLASHINFER_WORKSPACE_BASE": base}, None


def families_unread_for(gpus: Any) -> str | None:
    """Why no family's files need reading for the GPUs the verdicts judge (`gpus`: the facts' list), or None where
    they are read: every GPU listed has a compute capability read, none of a major in CUBIN_GPU_MAJORS (every rule
    that reads a family is scoped to those: cubin_releases.CUBIN_GPU_MAJORS). No list, an empty one (NVML not read:
    which GPUs the box has is not known), a GPU without its compute capability, or one of those majors: read."""
    if type(gpus) is not list or not gpus:
        return None
    from stackcheck.facts.model import cc_tuple

    seen: list[str] = []
    for gpu in gpus:
        cc = gpu.get("compute_capability") if isinstance(gpu, Mapping) else None
        found = cc_tuple(cc) if isinstance(cc, str) else None
        if found is None or found[0] in CUBIN_GPU_MAJORS:
            return None
        if cc not in seen:
            seen.append(str(cc))
    majors = ", ".join(f"{m}.x" for m in sorted(CUBIN_GPU_MAJORS))
    return (
        f"not checked: no GPU judged here loads FlashInfer's trtllm-gen cubins (compute capability {', '.join(seen)}; "
        f"every rule that reads a family is for compute capability {majors}), so its files were not read"
    )


def _with_source(found: tuple[str | None, str | None], source: str) -> tuple[str | None, str, str | None]:
    return found[0], source, found[1]


def no_download(release: tuple[int, int, int], env: Mapping[str, str], release_text: str = "") -> tuple[bool, bool]:
    """(refused, ignored): FLASHINFER_NO_DOWNLOAD set to any non-empty value ("0" too: os.getenv's truthiness) on a
    release that reads it (0.6.8+, and 0.6.7's post releases: 0.6.7.post1 / .post2 / .post3 cubin_loader.py:214, not
    0.6.7 itself: read by irev77), and whether it is set on one that does not."""
    set_ = bool(env.get("FLASHINFER_NO_DOWNLOAD"))
    reads = release >= NO_DOWNLOAD_FROM or (release == (0, 6, 7) and ".post" in release_text)
    return (set_ and reads), (set_ and not reads)


#: family_status's reason for a checksums.txt whose sha256 is not the release's CheckSumHash
_MISMATCH = "does not match this release's CheckSumHash"


def _taken_unchecked(status: dict[str, Any]) -> dict[str, Any]:
    """A family's status as FlashInfer reads it with FLASHINFER_CUBIN_CHECKSUM_DISABLED set (imend12): load_cubin
    (jit/cubin_loader.py: 0.5.0 :166-189, 0.6.8 :174-197, 0.7.2 :181-204, 0.7.4 :222-245) returns any file it can
    open without hashing it, the checksums.txt that get_artifact fetches with the release's CheckSumHash too
    (jit/attention/modules.py, jit/gemm/core.py: get_artifact(checksum_path, CheckSumHash...)); so a checksums.txt
    that is not the release's is not missing but taken, with the files of another release it lists: "manifest" None
    (unknown, never false and never true) with the reason."""
    if status.get("manifest") is False and status.get("reason") == _MISMATCH:
        why = (f"checksums.txt {_MISMATCH}, and FLASHINFER_CUBIN_CHECKSUM_DISABLED is set: FlashInfer takes it as "
               "it is, with the files of another release it lists (which kernels they hold is not read)")  # fmt: skip
        return {**status, "manifest": None, "reason": why}
    return status


def family_status(
    view: FileView, base: str, rel: str, sha: str | None, keep: KeptFamilies | None = None
) -> dict[str, Any]:
    """A family's manifest and files under `base`: {"manifest": bool, "listed": n, "missing": n, "missing_first":
    [names]}; "manifest" false where checksums.txt is missing or its sha256 is not CheckSumHash's (None:
    not checked, no hash known); None where it is there but too large to read (over _MANIFEST_LIMIT), or where a
    line names a path that is absolute or holds a '..' component (the reason names the line: imend16). Each
    directory the names lie in is listed once and each listed name stat'ed (a file FlashInfer can load: _loadable);
    no cubin is read or hashed. With `keep` (this host's files only: KeptFamilies.open) an answer kept under the
    stamps of checksums.txt and of every directory listed, and of each such directory's names that are no non-empty
    regular file (_odd_entries: a file emptied in place changes no directory's stamp, imend16), is taken instead of
    reading them (a family with a listed name that is a link is never kept, its target's directory is not stamped:
    irev79)."""
    family_dir = posixpath.join(base, rel)
    manifest_path = posixpath.join(family_dir, "checksums.txt")
    if keep is not None:
        return keep.status(view, family_dir, manifest_path, sha)
    return _read_family(view, family_dir, manifest_path, sha, None)


def _read_family(
    view: FileView, family_dir: str, manifest_path: str, sha: str | None, dirs: list[list[Any]] | None
) -> dict[str, Any]:
    """family_status's straightforward reading; where `dirs` is a list, each directory listed is added to it with
    its stamp (_any_stamp), taken before it is listed."""
    try:
        data = view.read_bytes(manifest_path, _MANIFEST_LIMIT + 1)
    except OSError:
        return {"manifest": False, "listed": None, "missing": None, "missing_first": []}
    if len(data) > _MANIFEST_LIMIT:
        return {"manifest": None, "listed": None, "missing": None, "missing_first": [],
                "reason": f"checksums.txt is over {_MANIFEST_LIMIT >> 20} MiB: not read"}  # fmt: skip
    import hashlib  # (here, where a checksums.txt is read: a gate's kept answer on a box without FlashInfer imports
    # no hashlib, OpenSSL's start-up: tests/commands/test_gate_kept_early.py)

    if sha is not None and hashlib.sha256(data).hexdigest() != sha.lower():
        return {"manifest": False, "listed": None, "missing": None, "missing_first": [],
                "reason": _MISMATCH}  # fmt: skip
    names: list[str] = []
    escape: tuple[int, str] | None = None  # (the first line whose name leaves the family's directory, its name)
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        parts = line.split()
        if len(parts) != 2:
            continue
        # (a ".." component is looked for only where ".." is in the name at all: the same answer, without splitting
        # each of 16,004 names)
        if not parts[1].startswith("/") and (".." not in parts[1] or ".." not in parts[1].split("/")):
            names.append(parts[1])
        elif escape is None:
            escape = (number, parts[1])
    by_dir: dict[str, list[str]] = {}  # (each directory's leaves, in the order its first name came)
    for name in names:
        sub, _, leaf = name.rpartition("/")
        leaves = by_dir.get(sub)
        if leaves is None:
            by_dir[sub] = [leaf]
        else:
            leaves.append(leaf)
    missing: list[str] = []
    linked: list[str] = []
    for sub, leaves in by_dir.items():
        directory = posixpath.join(family_dir, sub) if sub else family_dir
        if dirs is not None:
            stamp = _any_stamp(directory)  # (before the directory is listed)
            scan = _scan(directory)
            dirs.append([directory, stamp, None if scan is None else scan[1]])
            gone = _missing_leaves(view, directory, leaves, linked, scan)
        else:
            gone = _missing_leaves(view, directory, leaves, linked)
        missing += [f"{sub}/{leaf}" for leaf in gone] if sub else gone
    if dirs is not None and linked:
        dirs.append(["", None, None])  # (a name reached through a link: its target's changes move no stamp kept here)
    status: dict[str, Any] = {
        "manifest": True,
        "listed": len(names),
        "missing": len(missing),
        "missing_first": sorted(missing)[:_MAX_FIRST],
    }
    if escape is not None:
        # (imend16: such a line was skipped, so a family whose other names were all there read ready. The name is
        # joined to the cubin directory by whatever loads it, so the file it reaches lies outside the family's
        # directory, or outside the cubin directory: which one, and whether it is the cubin the release expects, is
        # not judged. Unknown, never ready; the names inside the directory are still counted.)
        number, name = escape
        shown = name if len(name) <= 80 else name[:77] + "..."
        status["manifest"] = None
        status["reason"] = (
            f"checksums.txt line {number} names {shown!r}, a path that is absolute or holds a '..' component (it "
            "leaves the family's directory: which file FlashInfer would load for it is not judged)"
        )
    return status


def _missing_leaves(
    view: FileView,
    directory: str,
    leaves: list[str],
    linked: list[str] | None = None,
    scan: tuple[set[str], list[str], set[str]] | None = None,
) -> list[str]:
    """The leaves (names without a "/") of `directory` that are no loadable file there (_loadable), in their order:
    the directory listed once; on the host, held open once (_HostDir) and each listed leaf lstat'ed relative to it in
    one tight loop (a link, or a leaf the open directory cannot take, judged by _loadable itself, which adds a link to
    `linked`: irev79, such a family is not kept between runs). `scan` (_scan of the directory on this host, taken for
    a kept answer): the same lstat of every name there, read instead of listing and lstat'ing again."""
    if scan is not None:
        listing, odd_names, links = scan
        odd = set(odd_names)
        return [
            leaf
            for leaf in leaves
            if leaf not in listing
            or (leaf in odd and (leaf not in links or not _loadable(view, directory, leaf, None, linked)))
        ]
    try:
        listing = set(view.listdir(directory))
    except OSError:
        return list(leaves)
    host = _HostDir.open(view, directory)
    try:
        fd = None if host is None else host.fd
        if fd is None:
            return [
                leaf for leaf in leaves if leaf not in listing or not _loadable(view, directory, leaf, host, linked)
            ]
        gone: list[str] = []
        lstat_at = os.stat
        is_link, is_reg = stat_module.S_ISLNK, stat_module.S_ISREG
        for leaf in leaves:
            if leaf not in listing:
                gone.append(leaf)
                continue
            try:
                st = lstat_at(leaf, dir_fd=fd, follow_symlinks=False)
            except (OSError, ValueError):
                gone.append(leaf)
                continue
            if is_link(st.st_mode):
                if not _loadable(view, directory, leaf, None, linked):
                    gone.append(leaf)
            elif not (is_reg(st.st_mode) and st.st_size > 0):
                gone.append(leaf)
        return gone
    finally:
        if host is not None:
            host.close()


def _host_dir(view: FileView, directory: str) -> str | None:
    """The host path of a box directory with its links resolved (once per directory: a root's `stat` resolves every
    component of each path again, ~0.13 ms a file, 1.7 s for 13,453 cubins), where the view is the host's."""
    host_path = getattr(view, "host_path", None)
    if not callable(host_path):
        return None
    try:
        return str(host_path(view.realpath(directory)))
    except (OSError, ValueError):
        return None


class _HostDir:
    """A box directory's host path (_host_dir) held open once, so that each listed name is lstat'ed relative to it
    (fstatat with AT_SYMLINK_NOFOLLOW) rather than by its whole path, which the kernel walks again for every name
    (iperf39: 16,004 names of flashinfer-cubin 0.6.13, ~25 % less CPU than os.lstat of each joined path; os.scandir
    with DirEntry.stat measured slower than either). The same lstat of the same directory: a name's answer is the
    same (tests/probes/test_flashinfer_cubins_dirfd.py compares both on every kind of name). Where the directory
    cannot be opened, `fd` is None and the joined path is lstat'ed as before."""

    def __init__(self, path: str, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    @classmethod
    def open(cls, view: FileView, directory: str) -> _HostDir | None:
        path = _host_dir(view, directory)
        if path is None:
            return None
        try:
            fd: int | None = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except (OSError, ValueError):
            fd = None
        return cls(path, fd)

    def lstat(self, leaf: str) -> os.stat_result:
        if self.fd is not None and leaf and "/" not in leaf:
            return os.stat(leaf, dir_fd=self.fd, follow_symlinks=False)
        return os.lstat(os.path.join(self.path, leaf))

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _loadable(
    view: FileView, directory: str, leaf: str, host_dir: _HostDir | None, linked: list[str] | None = None
) -> bool:
    """Whether a listed name is a file FlashInfer's load_cubin can read something from: a regular file (its link
    followed) that is not empty. A dangling or looping link, a directory or a FIFO fails its open (or blocks it) and an
    empty file reads b"": get_artifact takes either as missing (0.6.13 jit/cubin_loader.py:181-228: a download, or
    under FLASHINFER_NO_DOWNLOAD 'Artifact not found locally'; the same in 0.5.0 :172-205 and 0.7.2), so the listing's
    name alone is no file there (irobust9). The content is not read (its sha256 is not checked). `host_dir`
    (_HostDir.open): a name that is no link there is judged by one lstat; a link goes through the view's own stat, its
    name added to `linked` (as is every name judged without a host directory: whether it is a link is not seen)."""
    if host_dir is not None:
        try:
            st = host_dir.lstat(leaf)
        except (OSError, ValueError):
            return False
        if not stat_module.S_ISLNK(st.st_mode):
            return stat_module.S_ISREG(st.st_mode) and st.st_size > 0
    if linked is not None:
        linked.append(leaf)
    found = view.stat(posixpath.join(directory, leaf))
    return found is not None and found.kind == "file" and found.size > 0


def named_status(view: FileView, base: str, rel: str, names: list[str]) -> dict[str, Any]:
    """The family_status of a family without checksums.txt (CUDNN_SDPA): its names (read from FlashInfer's own
    source) looked up in one listing of `<base>/<rel>`; "manifest" true where names were read."""
    family_dir = posixpath.join(base, rel)
    missing = _missing_leaves(view, family_dir, names)
    return {"manifest": bool(names), "listed": len(names), "missing": len(missing),
            "missing_first": missing[:_MAX_FIRST]}  # fmt: skip


#: the code whose answers KeptFamilies keeps (readers.kept's key, with kept.py itself): this module; the release
#: constants and parse_artifacts' parser it calls
_READERS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), *parts)
    for parts in (("probes", "flashinfer_cubins.py"), ("facts", "cubin_releases.py"), ("pyast.py",))
)


def _any_stamp(path: str) -> list[int] | None:
    """[device, inode, size, mtime_ns, ctime_ns] of whatever is at `path` (links followed, as listdir follows them),
    None where nothing is: a directory's times change with every name added, removed or renamed in it."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _odd_entries(directory: str) -> list[str] | None:
    """The names in `directory` that are no regular file with something in it (lstat: an empty file, a link, a
    directory, a FIFO, a name whose lstat fails), sorted; None where the directory cannot be opened or listed. A file
    emptied or truncated to nothing in place changes no directory's stamp (imend16: such a family read ready from
    its kept answer, and the launch's cubin load failed), so a kept answer also keeps this list, from the same scan
    its names were judged on (_scan), and is served only where the list is the same again: with the directory's
    stamp unchanged (the same names), the same list means every name is the same kind of file as when it was read."""
    scan = _scan(directory)
    return None if scan is None else scan[1]


def _scan(directory: str) -> tuple[set[str], list[str], set[str]] | None:
    """(every name in `directory`, _odd_entries' list, the names that are links) from one listing and one lstat per
    name relative to the directory held open (as _missing_leaves does; no file is opened or read), or None where the
    directory cannot be opened or listed."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        try:
            names = os.listdir(fd)
        except OSError:
            return None
        odd: list[str] = []
        links: set[str] = set()
        lstat_at = os.stat
        is_reg, is_link = stat_module.S_ISREG, stat_module.S_ISLNK
        for name in names:
            try:
                st = lstat_at(name, dir_fd=fd, follow_symlinks=False)
            except (OSError, ValueError):
                odd.append(name)
                continue
            if not (is_reg(st.st_mode) and st.st_size > 0):
                odd.append(name)
                if is_link(st.st_mode):
                    links.add(name)
        odd.sort()
        return set(names), odd, links
    finally:
        os.close(fd)


def _dir_state(directory: str) -> tuple[list[int] | None, list[str] | None]:
    """(_any_stamp, _odd_entries) of a directory, the stamp taken before the listing: what a kept answer is served
    under."""
    stamp = _any_stamp(directory)
    scan = _scan(directory)
    return stamp, None if scan is None else scan[1]


def _is_stamp(value: Any) -> bool:
    return type(value) is list and len(value) == 5 and all(type(v) is int for v in value)


def _is_kept_status(got: Any) -> bool:
    if type(got) is not dict or type(got.get("status")) is not dict or type(got.get("dirs")) is not list:
        return False
    return all(
        type(d) is list
        and len(d) == 3
        and type(d[0]) is str
        and (d[1] is None or _is_stamp(d[1]))
        and (d[2] is None or (type(d[2]) is list and all(type(n) is str for n in d[2])))
        for d in got["dirs"]
    )


#: read_last's key in the kept document (no path: a newline first) and its stamp (no file's: the answer is a guess)
_READ_LAST = "\nfamilies read"
_READ_LAST_STAMP = [0, 0, 0, 0, 0]


class KeptFamilies:
    """What this probe read of a host's cubin directory, kept between runs (stackcheck.readers.kept, document
    deep/flashinfer_cubins.json; issue 21, iperf38: flashinfer-cubin 0.6.13's four checksums.txt are 2.9 MB, read,
    hashed and split into 16,004 names, and their 11 directories listed, ~35 ms CPU on every audit and gate).

    A family's answer is kept by the path of its checksums.txt and the CheckSumHash it was checked against, under
    the manifest's stamp (taken before it is read) with the stamp of every directory its names lie in (taken before
    each is listed; absent: None) and each directory's names that are no non-empty regular file (_odd_entries, taken
    there too: a file emptied or truncated to nothing in place moves no stamp, imend16). It is served only where all
    of them are the same again: a name added to, removed from or renamed in a directory changes that directory's
    times, a rewritten manifest its own, a file emptied (or an empty one filled) that directory's list, so what a
    family's status says (the manifest there and matching, which listed names are present) is the same as a reading
    would give. Checking the lists costs one lstat per name on every kept run (imend16: ~the 16,004 names of
    flashinfer-cubin 0.6.13; the manifest is still not read, hashed or split). Never kept: a directory changed less
    than kept.RACY_NS before its stamp (as kept.put does for the
    manifest); a family one of whose listed names is a link (a target removed, emptied or moved changes no stamp of
    the family's directories: a dangling link would stay present, irev79). artifacts.py's constants are kept by its
    stamp too. This host only (fsview.is_host), never a --root or --image view; `cache_dir` ""
    (the probe function's default) keeps nothing."""

    def __init__(self, kept: Any) -> None:
        self.kept = kept
        #: each kept directory's (_any_stamp, _odd_entries) as `prescan` took them, by path (iperf42)
        self.scanned: dict[str, tuple[list[int] | None, list[str] | None]] = {}

    def prescan(self) -> int:
        """Take now the stamp and the odd names (_dir_state) of every directory a kept answer names whose
        checksums.txt still has its kept stamp, for `status` to compare instead of scanning each again (iperf42:
        FlashinferCubinsProbe.prepare runs it in a thread beside the first wave, the driver's start and the target's
        Python, rather than after the packages probe; each lstat releases the interpreter lock). The same reading
        as status' own, taken earlier in the same run. Returns the number of directories scanned."""
        from stackcheck.readers import kept as kept_module

        for key, item in list(self.kept.files.items()):
            manifest_path, sep, _ = key.partition("\n")
            value = item[1]
            if not sep or not _is_kept_status(value) or kept_module.file_stamp(manifest_path) != item[0]:
                continue
            for path, _was, _odd in value["dirs"]:
                if path and path not in self.scanned:
                    self.scanned[path] = _dir_state(path)
        return len(self.scanned)

    def read_last(self) -> bool:
        """Whether the last run that kept an answer here read the families' files (true where not kept): prepare's
        guess, before NVML has answered, of whether this run reads them (a wrong guess costs time, never an answer:
        run() decides on the GPUs read, and scans itself where nothing was prescanned)."""
        return self.kept.get(_READ_LAST, _READ_LAST_STAMP) is not False

    def mark_read(self, read: bool) -> None:
        """Keep whether this run reads the families' files (read_last), where that changed: only a run that read
        none leaves an entry (false), a run that reads them takes it away."""
        if read:
            if self.kept.files.pop(_READ_LAST, None) is not None:
                self.kept.changed = True
        elif self.kept.get(_READ_LAST, _READ_LAST_STAMP) is not False:
            self.kept.put(_READ_LAST, _READ_LAST_STAMP, False)

    def _state(self, path: str) -> tuple[list[int] | None, list[str] | None]:
        got = self.scanned.get(path)
        return _dir_state(path) if got is None else got

    @classmethod
    def open(cls, view: FileView, cache_dir: str | None) -> KeptFamilies | None:
        if cache_dir == "":
            return None
        from stackcheck.readers.fsview import is_host

        if not is_host(view):
            return None
        from stackcheck.readers.kept import Kept, directory

        where = directory(cache_dir)
        return None if where is None else cls(Kept("flashinfer_cubins", where, _READERS))

    def status(self, view: FileView, family_dir: str, manifest_path: str, sha: str | None) -> dict[str, Any]:
        from stackcheck.readers import kept as kept_module

        key = f"{manifest_path}\n{'-' if sha is None else '=' + sha}"
        stamp = kept_module.file_stamp(manifest_path)
        got = self.kept.get(key, stamp)
        if got is not kept_module.MISS and _is_kept_status(got):
            if all(path and self._state(path) == (was, odd) for path, was, odd in got["dirs"]):
                status = dict(got["status"])
                if type(status.get("missing_first")) is list:
                    status["missing_first"] = list(status["missing_first"])
                return status
        dirs: list[list[Any]] = []
        status = _read_family(view, family_dir, manifest_path, sha, dirs)
        if stamp is not None:
            import time

            now = time.time_ns()
            if all(path and (s is None or now - max(s[3], s[4]) >= kept_module.RACY_NS) for path, s, _odd in dirs):
                self.kept.put(key, stamp, {"status": status, "dirs": dirs})
        return status

    def artifacts(self, view: FileView, path: str) -> tuple[dict[str, str], dict[str, str]]:
        """parse_artifacts of the file at `path`, kept by its stamp (an error is never kept: it raises again)."""
        from stackcheck.readers import kept as kept_module

        stamp = kept_module.file_stamp(path)
        got = self.kept.get(path, stamp)
        if (
            got is not kept_module.MISS
            and type(got) is list
            and len(got) == 2
            and all(type(d) is dict and all(type(v) is str for v in d.values()) for d in got)
        ):
            return dict(got[0]), dict(got[1])
        found = _read_artifacts(view, path)
        self.kept.put(path, stamp, [found[0], found[1]])
        return found

    def save(self) -> None:
        self.kept.save()


def _read_artifacts(view: FileView, path: str) -> tuple[dict[str, str], dict[str, str]]:
    text = view.read_bytes(path, _ARTIFACTS_LIMIT)
    return parse_artifacts(text.decode("utf-8", errors="replace"))


def _writable(view: FileView, path: str) -> bool | None:
    """Whether the nearest existing directory at or above `path` is writable by its mode bits (any class: the
    server's uid is not compared; None where nothing is found)."""
    probe = path
    while probe and probe != "/":
        st = view.stat(probe)
        if st is not None:
            return st.kind == "dir" and bool(st.mode & 0o222)
        probe = posixpath.dirname(probe)
    return None


def probe_cubins(
    facts: Mapping[str, Any],
    env: Mapping[str, str],
    view: FileView,
    cwd: str | None = None,
    cache_dir: str | None = "",
    kept: KeptFamilies | None = None,
    unread: str | None = None,
) -> dict[str, Any] | None:
    """The `flashinfer_cubins` section, or None (left out) without flashinfer-python or for a release outside the
    ones read (FIRST_READ-LAST_READ: a rule then has no fact and says unknown). `cache_dir`: the probes'
    ProbeContext.cache_dir, where what was read of this host's files is kept (KeptFamilies; "" keeps nothing);
    `kept`: the KeptFamilies opened (and prescanned) for that cache_dir already, taken instead of opening it.
    `unread` (families_unread_for: no GPU judged loads these cubins): no family's checksums.txt or files are read,
    each `ready` null with that reason (unknown to a rule that reads it, never ready: iperf43) and `families` empty;
    the directory, its source and the download settings are read as always."""
    packages = facts.get("packages")
    if not isinstance(packages, Mapping):
        return None
    fi = packages.get("flashinfer-python")
    if not isinstance(fi, Mapping) or not fi.get("installed") or not isinstance(fi.get("version"), str):
        return None
    release_text = str(fi["version"])
    release = release_tuple(release_text)
    if release is None or not FIRST_READ <= release <= LAST_READ:
        return None
    out: dict[str, Any] = {"release": release_text}
    refused, ignored = no_download(release, env, release_text)
    out["no_download"] = refused
    # FlashInfer checks every artifact's sha256 as it loads it (load_cubin: 0.5.0 / 0.6.0 jit/cubin_loader.py:166-190,
    # 0.7.2 :181-205) unless FLASHINFER_CUBIN_CHECKSUM_DISABLED is set (any non-empty value: :192), and takes a file
    # whose hash differs for a missing one (get_artifact :216-233: fetched again, refused under
    # FLASHINFER_NO_DOWNLOAD). The files are counted here by name only: hashing them is not affordable in an audit
    # (flashinfer-cubin 0.6.13: 16,011 files, 1,819.5 MiB, 5.6-6.5 s of sha256 on a 2-core box with the pages cached,
    # against an audit of about 0.2-0.3 s: issue 21), so a complete family is "present, unverified". It is still
    # ready (lead's merge of icubin2): flashinfer-cubin's files come out of a wheel whose zip CRC-32 checked each one,
    # FlashInfer's own downloads land by an atomic rename (download_file: temp file, os.replace), and a truncated or
    # empty file is already missing here (_loadable); taking every complete family for unknown would refuse every
    # trtllm-gen launch on a healthy B200, the same doubt no other installed file gets (no .so is hashed either).
    # What the checksum does decide here is the family's checksums.txt, which is hashed: not the release's, it is
    # missing to a loader that checks (fetched again, refused under FLASHINFER_NO_DOWNLOAD) and taken as it is by one
    # that does not (_taken_unchecked: unknown)
    out["checksum_check"] = not env.get("FLASHINFER_CUBIN_CHECKSUM_DISABLED")
    if ignored:
        out["no_download_ignored"] = True
    repo_kind, repo_dir = repository_kind(env.get("FLASHINFER_CUBINS_REPOSITORY"), cwd)
    out["repository"] = repo_kind
    if repo_kind == "local":
        out["repository_dir"] = repo_dir
    location = fi.get("location")
    keep = kept if kept is not None else KeptFamilies.open(view, cache_dir)
    if keep is not None:
        keep.mark_read(unread is None)
    artifacts: dict[str, str] | None = None
    hashes: dict[str, str] = {}
    why_artifacts = None
    if isinstance(location, str) and location:
        try:
            path = posixpath.join(location, "flashinfer", "artifacts.py")
            if keep is None:
                artifacts, hashes = _read_artifacts(view, path)
            else:
                artifacts, hashes = keep.artifacts(view, path)
        except (OSError, ValueError) as exc:
            why_artifacts = f"flashinfer/artifacts.py not read: {exc}"
    else:
        why_artifacts = "flashinfer-python's location is not known"
    read = FAMILIES + tuple(f"{f}_RUBIN" for f in RUBIN_SPLIT if artifacts and f"{f}_RUBIN" in artifacts)
    cudnn_names: list[str] = []
    if artifacts is not None and CUDNN_SDPA in artifacts and isinstance(location, str):
        read += (CUDNN_SDPA,)
        try:
            launcher = view.read_bytes(posixpath.join(location, _CUDNN_LAUNCHER), _ARTIFACTS_LIMIT)
            cudnn_names = cudnn_sdpa_names(launcher.decode("utf-8", errors="replace"))
        except OSError:
            pass
    out["artifacts"] = {f: artifacts.get(f) for f in read} if artifacts is not None else None
    if why_artifacts:
        out["artifacts_reason"] = why_artifacts
    cubin_pkg = packages.get("flashinfer-cubin")
    package: tuple[str, str | None] | None = None
    if isinstance(cubin_pkg, Mapping) and cubin_pkg.get("installed"):
        loc = cubin_pkg.get("location")
        version = cubin_pkg.get("version")
        out["package_version"] = version
        out["package_version_matches"] = version == release_text if isinstance(version, str) else None
        package = (posixpath.join(loc, "flashinfer_cubin", "cubins") if isinstance(loc, str) else "", version)
    home = env.get("HOME")
    env, why_base = sglang_workspace_base(packages.get("sglang"), env)
    directory, source, reason = resolve_dir(release, env, package, home, cwd, release_text)
    if why_base and source == "cache":
        directory, reason = None, why_base
    if source == "flashinfer-cubin" and directory == "":
        directory, reason = None, "flashinfer-cubin's location is not known"
    out["dir"], out["dir_source"] = directory, source
    if reason:
        out["dir_reason"] = reason
    out["dir_writable"] = _writable(view, directory) if directory else None
    families: dict[str, Any] = {}
    ready: dict[str, bool | None] = {}
    ready_reason: dict[str, str] = {}
    for family in read:
        rel = artifacts.get(family) if artifacts is not None else None
        if unread is not None:
            ready[family] = None
            ready_reason[family] = f"{family}'s files were {unread}"
            continue
        if directory is None or rel is None:
            ready[family] = None
            ready_reason[family] = reason or why_artifacts or f"ArtifactPath.{family} not in this release"
            continue
        if family == CUDNN_SDPA and not cudnn_names:
            ready[family] = None
            ready_reason[family] = f"the cubin names of {_CUDNN_LAUNCHER} were not read"
            continue

        def status_in(base: str, family: str = family, rel: str = rel) -> dict[str, Any]:
            if family == CUDNN_SDPA:
                return named_status(view, base, rel, cudnn_names)
            return family_status(view, base, rel, hashes.get(family), keep)

        status = status_in(directory)
        if not out["checksum_check"]:
            status = _taken_unchecked(status)
        status["path"] = rel
        families[family] = status
        listed, missing = status["listed"], status["missing"]
        if status["manifest"] and missing == 0:
            status["files"] = "present, unverified"
            ready[family] = True
            continue
        mirror: dict[str, Any] | None = None
        if repo_kind == "local" and repo_dir is not None and not refused:
            mirror = status_in(repo_dir)
            if not out["checksum_check"]:
                mirror = _taken_unchecked(mirror)
            status["repository"] = {k: mirror[k] for k in ("manifest", "listed", "missing")}
            if mirror["manifest"] and mirror["missing"] == 0 and out["dir_writable"]:
                ready[family] = True  # copied from the local repository at the first kernel: no network
                continue
        if status["manifest"] is None:
            ready[family] = None
            ready_reason[family] = f"{family}'s {status['reason']} in {directory} ({source})"
            continue
        gone = not status["manifest"] or (listed is not None and missing == listed)
        mirror_gone = mirror is not None and (
            mirror["manifest"] is False or (mirror["listed"] is not None and mirror["missing"] == mirror["listed"])
        )
        if gone and not refused and (repo_kind == "unfetchable" or mirror_gone):
            ready[family] = False
            where = (
                "FLASHINFER_CUBINS_REPOSITORY is neither an http(s) URL nor a path (a file:// URL is neither: "
                "requests has no adapter for it)"
                if repo_kind == "unfetchable"
                else f"the local FLASHINFER_CUBINS_REPOSITORY {repo_dir} lacks them too"
            )
            ready_reason[family] = (
                f"{family}'s files are missing in {directory} ({source}) and {where}: each fetch fails after 4 "
                "tries (35-110 s of retries), then the family's first kernel fails"
            )
            continue
        if refused and gone:
            ready[family] = False
            what = (
                "cubins are all missing"
                if family == CUDNN_SDPA
                else "checksums.txt "
                + ("lists only missing files" if status["manifest"] else status.get("reason") or "is missing")
            )
            ready_reason[family] = (
                f"{family}'s {what} "
                f"in {directory} ({source}) and FLASHINFER_NO_DOWNLOAD is set: RuntimeError 'Artifact not found "
                "locally' at the family's first kernel"
                + (
                    " (raised in the C++ cubin callback, where ctypes prints and drops it; the launcher then has an "
                    "empty or stale cubin: 'Failed to load cubin for prefill' or a cuModule error)"
                    if family == CUDNN_SDPA
                    else ""
                )
            )
            continue
        ready[family] = None
        if refused and family == CUDNN_SDPA:
            ready_reason[family] = (
                f"{missing} of the {listed} cuDNN SDPA cubins are missing in {directory} and FLASHINFER_NO_DOWNLOAD "
                "is set: the launcher loads all of them at its first kernel and keeps a stale cubin where one is "
                "refused (not judged)"
            )
        elif refused:
            ready_reason[family] = (
                f"{missing} of {listed} files listed in {family}'s checksums.txt are missing in {directory} and "
                "FLASHINFER_NO_DOWNLOAD is set: which of them a kernel loads is only known from the downloaded "
                "meta-info header (not read)"
            )
        elif repo_kind == "local":
            ready_reason[family] = (
                f"{family}'s files are missing in {directory}: FlashInfer copies them from the local "
                f"FLASHINFER_CUBINS_REPOSITORY {repo_dir or '(a relative path; the working directory is not known)'}"
                ", which holds only part of them"
                + ("" if out["dir_writable"] or repo_dir is None else f", or {directory} is not writable")
            )
        else:
            ready_reason[family] = (
                f"{family}'s files are missing in {directory} ({source}): FlashInfer downloads them at the first "
                "kernel, which needs the network (not read); offline it retries 35-110 s per file, then "
                "AssertionError 'Failed to get checksums.txt'"
            )
    if keep is not None:
        keep.save()
    out["families"] = families
    if unread is not None:
        out["families_unread"] = unread
    out["ready"] = ready
    out["ready_reason"] = ready_reason
    return out


class FlashinferCubinsProbe(Probe):
    """Second-wave probe: needs the packages (flashinfer-python's and flashinfer-cubin's location and version)."""

    name: ClassVar[str] = "flashinfer_cubins"
    timeout_s: ClassVar[float] = 2.0
    sections: ClassVar[tuple[str, ...]] = ("flashinfer_cubins",)
    needs: ClassVar[tuple[str, ...]] = ("packages", "python", "gpus")  # (gpus: families_unread_for, iperf43)
    prepares: ClassVar[bool] = True

    def __init__(self) -> None:
        self._early: tuple[Any, list[KeptFamilies]] | None = None

    def prepare(self, ctx: ProbeContext) -> None:
        """Open this host's kept answers and take the stamp and odd names of every directory they name
        (KeptFamilies.prescan) in a thread now, beside the first wave (NVML's start, the target's Python), instead of
        after the packages probe this probe waits for (iperf42: flashinfer-cubin 0.6.13's 16,004 names, one lstat
        each). Nothing where no answer is kept (no document: one stat) or off this host. Returns at once; run()
        takes what it found, or does the work itself."""
        import threading

        from stackcheck.readers.fsview import is_host

        view = view_of(ctx)
        if ctx.cache_dir == "" or not is_host(view):
            return
        from stackcheck.readers import kept as kept_module

        where = kept_module.directory(ctx.cache_dir)
        if where is None or not os.path.isfile(os.path.join(where, "flashinfer_cubins" + kept_module.SUFFIX)):
            return
        done = threading.Event()
        answer: list[KeptFamilies] = []

        judged = ctx.judged_gpus
        if judged is not None and judged != "probed" and families_unread_for(judged) is not None:
            return  # (--host-facts' GPUs load no such cubin: run() reads no family, iperf43)

        def work() -> None:
            try:
                keep = KeptFamilies.open(view, ctx.cache_dir)
                if keep is not None:
                    if judged != "probed" or keep.read_last():  # (NVML's GPUs are not known yet: the last run's)
                        keep.prescan()
                    answer.append(keep)
            except Exception:  # (never a traceback from this thread: run() does the work itself)
                answer.clear()
            finally:
                done.set()

        self._early = (done, answer)
        threading.Thread(target=work, name="probe-flashinfer-cubins-prescan", daemon=True).start()

    def _prepared(self, ctx: ProbeContext) -> KeptFamilies | None:
        early, self._early = self._early, None
        if early is None:
            return None
        import time

        wait = None if ctx.deadline is None else max(0.0, ctx.deadline - time.monotonic())
        return early[1][0] if early[0].wait(wait) and early[1] else None

    def run(self, ctx: ProbeContext) -> ProbeResult:
        facts = getattr(ctx, "facts", None)
        if not isinstance(facts, Mapping) or not isinstance(facts.get("packages"), Mapping):
            return ProbeResult({}, "skipped", "needs the packages probe's facts")
        judged = ctx.judged_gpus
        section = probe_cubins(
            facts, ctx.loader_environ, view_of(ctx), cwd=ctx.launch_cwd, cache_dir=ctx.cache_dir,
            kept=self._prepared(ctx), unread=families_unread_for(facts.get("gpus") if judged == "probed" else judged),
        )  # fmt: skip
        if section is None:
            return ProbeResult({}, "skipped", "no flashinfer-python 0.5.0-0.7.4 installed")
        return ProbeResult({"flashinfer_cubins": section})
