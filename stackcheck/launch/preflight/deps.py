"""Dependencies: SGLang's own requirements against the distributions installed in the target environment,
judged as `pip check` judges them.

pip check reads each installed distribution's `Requires-Dist` lines, keeps a requirement whose marker
holds for the environment with `extra` empty (requirements under an extra are not checked: pip cannot know
which extras were asked for), and reports a requirement whose distribution is missing, or whose installed
version is outside the specifier (pre-releases allowed). Here the same is done for SGLang's requirements,
with `packaging` and the target environment's marker values. A line `lean_req` is sure of (its marker is
false here, or the installed version meets it) is answered without packaging; any other line, and every line
that is not plainly met, is judged by packaging (imported then), so a healthy environment's check imports
no `packaging.requirements`.

Missing or conflicting refuses, naming the distribution and the requirement. A conflict that is only an
exact-pin mismatch (`==`) of a package the manifests know (torch, the kernel packages, FlashInfer, ...) is a
warning: those pins are judged by the `sglang-pins` stack check and the feature rules, which know which
mismatches work.

Reading the environment: each search directory (the target's sys.path) is listed once; `NAME-VERSION.dist-info`
and `.egg-info` entries give the candidates, first directory wins (as importlib.metadata finds them), and
only the METADATA headers of SGLang and of the distributions it requires are read (capped).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from stackcheck.launch.preflight.result import CheckResult
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.readers.fsview import FileView

HEADERS_CAP = 1 << 20
_NORMALISE = re.compile(r"[-_.]+")
_META_DIR = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._]*?)(?:-(?P<version>[^-/]+?)(?:-py[^/]*)?)?\.(dist|egg)-info$"
)


#: the check ids this module's results carry (imend15: gate_preflight.preflight_checks derives --allow's from them)
CHECK_IDS = ("dependencies",)


def normalise(name: str) -> str:
    return _NORMALISE.sub("-", name).lower()


class Dist(NamedTuple):
    name: str  # normalised
    version: str | None
    meta_dir: str  # box path of the .dist-info / .egg-info
    error: str | None = None


def list_distributions(view: FileView, search_dirs: Sequence[str]) -> dict[str, str]:
    """normalised name -> the first metadata directory for it along the search path (names only, no reads)."""
    found: dict[str, str] = {}
    for d in search_dirs:
        try:
            names = view.listdir(d)
        except OSError:
            continue
        for entry in names:
            m = _META_DIR.match(entry)
            if m is None:
                continue
            found.setdefault(normalise(m.group("name")), f"{d.rstrip('/')}/{entry}")
    return found


def read_headers(view: FileView, meta_dir: str) -> tuple[list[tuple[str, str]], str | None]:
    """The METADATA (or PKG-INFO) headers of a distribution, in order, or an error."""
    path = f"{meta_dir}/{'PKG-INFO' if meta_dir.endswith('.egg-info') else 'METADATA'}"
    st = view.stat(meta_dir)
    if st is not None and st.kind == "file":  # a single-file .egg-info
        path = meta_dir
    try:
        data = view.read_bytes(path, HEADERS_CAP)
    except OSError as exc:
        return [], f"{path}: cannot read: {exc.strerror or exc}"
    headers: list[tuple[str, str]] = []
    for line in data.decode("utf-8", "replace").splitlines():
        if not line.strip():
            break
        if line[:1] in (" ", "\t") and headers:
            continue
        key, sep, value = line.partition(":")
        if sep:
            headers.append((key.strip(), value.strip()))
    return headers, None


def read_dist(view: FileView, name: str, meta_dir: str) -> tuple[Dist, list[str]]:
    """A distribution's version and its Requires-Dist lines."""
    headers, err = read_headers(view, meta_dir)
    if err is not None:
        return Dist(name, None, meta_dir, err), []
    version = next((v for k, v in headers if k == "Version"), None)
    requires = [v for k, v in headers if k == "Requires-Dist"]
    if version is None:
        return Dist(name, None, meta_dir, f"{meta_dir}: no Version header"), requires
    return Dist(name, version, meta_dir), requires


def marker_environment(python: str | None, machine: str | None) -> dict[str, str]:
    """Marker values for the target environment: this interpreter's, with the target's Python version and
    machine where the facts give them (`extra` empty, as pip check evaluates)."""
    from packaging.markers import default_environment

    from stackcheck.launch.preflight.lean_req import environment

    env: dict[str, str] = {k: str(v) for k, v in default_environment().items()}
    env.update(environment(python, machine))  # the target's values over this interpreter's (lean_req's own)
    return env


def _unreadable(
    package: str, version: str | None, line: str, exc: Exception, src: Any, against: str = ""
) -> CheckResult:
    """A requirement packaging cannot judge (a number past int()'s 4,300 digits): unknown, cut to 200 chars."""
    text = f"{package} {version}: Requires-Dist {line[:200]!r}{against[:200]} cannot be read: {str(exc)[:200]}"
    return CheckResult("dependencies", "unknown", line[:200], "a valid requirement", text, src, subject=line[:200])


def check_dependencies(
    view: FileView,
    search_dirs: Sequence[str],
    marker_env: Mapping[str, str] | None,
    known: set[str],
    package: str = "sglang",
    source: Any = None,
    target: tuple[str | None, str | None] = (None, None),
) -> list[CheckResult]:
    """The dependency check for `package`: one result per missing or conflicting requirement, or one ok.
    `marker_env` None: the marker values come from `target` (the target's Python version and machine), built
    with packaging only when a line needs packaging."""
    dists = list_distributions(view, search_dirs)
    where = dists.get(package)
    if where is None:
        return []  # not installed here: the features' `needs` say so; nothing to check
    from stackcheck.launch.preflight.lean_req import environment, read_line, spec_met

    lean_env = environment(*target) if marker_env is None else dict(marker_env)
    top, lines = read_dist(view, package, where)
    if top.error is not None:
        return [CheckResult("dependencies", "unknown", None, f"{package}'s requirements", top.error, source)]
    results: list[CheckResult] = []
    checked = 0
    pip_check = {"title": "pip check (pip/_internal/operations/check.py): markers with extra='', prereleases allowed",
                 "url": "https://pip.pypa.io/en/stable/cli/pip_check/"}  # fmt: skip
    src = source or [{"title": f"{package} {top.version} METADATA Requires-Dist", "path": where}, pip_check]
    for line in lines:
        lean = read_line(line, lean_env)
        if lean is not None:  # sure of the line: it does not apply here, or the installed version meets it
            lean_name, specs, holds = lean
            if not holds:
                continue
            meta = dists.get(normalise(lean_name))
            if meta is not None:
                dist, _ = read_dist(view, normalise(lean_name), meta)
                if dist.version is not None and spec_met(specs, dist.version):
                    checked += 1
                    continue
        # anything else is judged by packaging, as pip check judges it, with its wording
        from packaging.requirements import InvalidRequirement, Requirement

        if marker_env is None:
            marker_env = marker_environment(*target)
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            results.append(
                CheckResult("dependencies", "unknown", line, "a valid requirement",
                            f"{package} {top.version}: Requires-Dist {line!r} cannot be read: {exc}", src,
                            subject=line)
            )  # fmt: skip
            continue
        try:
            applies = req.marker is None or req.marker.evaluate(dict(marker_env))
        except ValueError as exc:  # a version literal longer than int() reads (4,300 digits)
            results.append(_unreadable(package, top.version, line, exc, src))
            continue
        if not applies:
            continue
        checked += 1
        name = normalise(req.name)
        meta = dists.get(name)
        text = str(req)
        if meta is None:
            results.append(
                CheckResult(
                    "dependencies", "fail", None, text,
                    f"{package} {top.version} requires {text}, and {name} is not installed in the target "
                    f"environment: the server fails when it imports {name}", src, subject=name,
                )
            )  # fmt: skip
            continue
        dist, _ = read_dist(view, name, meta)
        if dist.version is None:
            results.append(
                CheckResult("dependencies", "unknown", None, text,
                            f"{package} requires {text}; the installed {name} cannot be read: {dist.error}", src,
                            subject=name)
            )  # fmt: skip
            continue
        try:
            if not req.specifier or req.specifier.contains(dist.version, prereleases=True):
                continue
        except ValueError as exc:  # as above, in the specifier or in the installed version
            results.append(_unreadable(package, top.version, line, exc, src, f" against {name} {dist.version}"))
            continue
        pin_only = all(s.operator in ("==", "===") for s in req.specifier) and name in known
        if pin_only:
            results.append(
                CheckResult(
                    "dependencies", "warn", dist.version, text,
                    f"{package} {top.version} pins {text}; {dist.version} is installed: a pin mismatch of a package "
                    "the manifests know only warns here (the sglang-pins stack check and the feature rules judge it)",
                    src, subject=name,
                )
            )  # fmt: skip
        else:
            results.append(
                CheckResult(
                    "dependencies", "fail", dist.version, text,
                    f"{package} {top.version} requires {text}; {name} {dist.version} is installed ({meta})",
                    src, subject=name,
                )
            )  # fmt: skip
    if not any(r.status in ("fail", "unknown") for r in results):
        results.insert(
            0,
            CheckResult(
                "dependencies", "ok", {"requirements_checked": checked}, f"{package} {top.version}'s Requires-Dist",
                f"{checked} requirements of {package} {top.version} are installed in the target environment "
                f"({len(search_dirs)} search directories)", src,
            ),
        )  # fmt: skip
    return results
