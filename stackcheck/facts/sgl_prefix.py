"""SGLang's legacy `SGL_` spelling of its variables: from 0.5.3 on, importing sglang.srt.environ copies every
variable whose name starts with `SGL_` to the `SGLANG_` name (the first `SGL_` replaced), overwriting a `SGLANG_`
value already set, with a `warnings.warn` saying the old name is deprecated (read in the wheels fetched with pip
download --no-deps: sglang 0.5.3 sglang/srt/environ.py:216-226 `_convert_SGL_to_SGLANG`, the same loop in 0.5.6
:366-371, 0.5.9 :541-547, 0.5.12 :715-721, 0.5.16 :1218-1223; 0.5.20 :1914-1920 and 0.5.23 :2299-2305
`_handle_deprecated_envs`, which skips a name listed in its `_DEPRECATED_ENVS` registry: none there starts with `SGL_`
in 0.5.20 or 0.5.23). sglang 0.5.2 has no sglang/srt/environ.py and no such copy. That every read of a launch.json
variable comes after that import (server_args imports it) is inferred.

So `SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2=0` is SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2=0 to SGLang 0.5.3 and later, and the
gate and the audit read launch.json's `env` entries through sglang_environ (imend5: the SGL_ spelling was missed)."""

from __future__ import annotations

from collections.abc import Mapping

#: the releases that copy SGL_X to SGLANG_X at import: from the release candidate 0.5.3rc2 on (irobust6: its wheel has
#: sglang/srt/environ.py with the same loop, :216-226 `_convert_SGL_to_SGLANG`; 0.5.3rc0's has no environ.py, and no
#: 0.5.3rc1 is on PyPI). `>=0.5.3` left 0.5.3rc2 out (a pre-release sorts before its release): an SGL_ variable that
#: release reads was not read
COPIES_SGL = ">=0.5.3rc2"

#: SGLANG_ names whose SGL_ copy comes too late to be read, by release: 0.5.12-0.5.20 read SGLANG_USE_JIT_ALL_REDUCE
#: only in the deprecation handler that copies it to SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2, which runs before the SGL_
#: loop (environ.py: 0.5.12 :698-700 before :715, 0.5.13 :918 before :934, 0.5.15 :1021 / :1037, 0.5.16 :1202 /
#: :1218, 0.5.17 :1391 / :1407 `_print_deprecated_env`; 0.5.18 :1567 / :1625, 0.5.19 :1724 / :1797, 0.5.20 :1837 /
#: :1915 the `_DeprecatedEnv` registry, applied first); no other file of the 0.5.12, 0.5.16 or 0.5.20 wheel names it
#: (the other releases' other files not read: inferred). 0.5.10-0.5.11 read it in custom_all_reduce.py's dispatch
#: (0.5.11 :349 get_bool_env_var), after the copy.
COPIED_TOO_LATE = {"SGLANG_USE_JIT_ALL_REDUCE": ">=0.5.12,<0.5.21"}


def copies_sgl(release: str | None) -> bool | None:
    """Whether SGLang `release` copies SGL_ names to SGLANG_ ones (None: the release is not known or not read)."""
    if release is None:
        return None
    from stackcheck.facts.versions import version_in

    return version_in(release, COPIES_SGL)


def sgl_twins(env: Mapping[str, str]) -> dict[str, str]:
    """{SGLANG_ name: the value SGLang copies to it} for each SGL_ name set in `env`."""
    return {"SGLANG_" + name[4:]: value for name, value in env.items() if name.startswith("SGL_")}


def sglang_environ(env: Mapping[str, str], release: str | None) -> tuple[dict[str, str], list[str]]:
    """(`env` as SGLang `release` reads it after its import: each SGL_X copied over SGLANG_X where the release does
    so; the SGLANG_ names whose value depends on a release not known: an SGL_ twin set to another value than the
    SGLANG_ name has, read here as the copy; a name in COPIED_TOO_LATE is not copied where the release is in its range
    or not known)."""
    from stackcheck.facts.versions import version_in

    twins = sgl_twins(env)
    copies = copies_sgl(release)
    out = dict(env)
    if copies is False or not twins:
        return out, []
    undecided: list[str] = []
    for name, value in twins.items():
        late = COPIED_TOO_LATE.get(name)
        late_here = version_in(release, late) if late is not None and release is not None else late is not None
        if copies is None or (late is not None and release is None):
            if env.get(name) != value:
                undecided.append(name)
        if late_here is True:
            continue  # (copied after the one reader ran: not read)
        out[name] = value
    return out, undecided
