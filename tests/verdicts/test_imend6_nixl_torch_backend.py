"""imend6: nixl 1.1.0-1.5.2 import the backend of torch's CUDA major (nixl_cu<N>, ImportError without it). Three readers
picked that backend apart (the backend library item, the modules the API floor judges, the API floor's 'not settled'
list), each with its own answer for a torch whose CUDA build is not given: the API floor judged whatever backend was
installed (ok for nixl-cu12 1.5.2 where the library item said unknown: a CUDA 13 torch would take a nixl-cu13 the facts
do not give). One reader (_torch_backend) serves all three now: where the backend a torch build takes is not settled,
every answer that hangs on it is unknown, never ok and never fail. The facts are hand-made (no upstream file)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.verdicts import package_checks as pc

DATA = load([], env={}).preflight
ENTRY = next(e for e in DATA["transfer_packages"]["entries"] if e.get("transfer_backend") == "nixl")
LIBS = {"libcudart.so.12": "/x/a", "libcudart.so.13": "/x/b", "libssl.so.3": "/x/c", "libcrypto.so.3": "/x/d"}
STATES: dict[str, dict[str, Any] | None] = {
    "not given": None,
    "absent": {"installed": False},
    "1.1.0": {"installed": True, "version": "1.1.0", "dist_version": "1.1.0"},
    "1.5.2": {"installed": True, "version": "1.5.2", "dist_version": "1.5.2"},
}
CASES = list(itertools.product(["1.1.0", "1.5.2"], STATES, STATES))


def _facts(cu12: str, cu13: str, torch_cuda: str | None) -> dict[str, Any]:
    torch: dict[str, Any] = {"installed": True, "version": "2.9.0"}
    if torch_cuda is not None:
        torch["cuda"] = torch_cuda
    listed: dict[str, Any] = {"torch": torch}
    for name, state in (("nixl-cu12", STATES[cu12]), ("nixl-cu13", STATES[cu13])):
        if state is not None:
            listed[name] = state
    return {"packages": listed, "cuda_libs": LIBS}


def _paths(forwarder: str, facts: dict[str, Any]) -> dict[str, str]:
    """Each path's status for SGLang 0.5.23 (None, judged on, as 'ok')."""
    package = {"installed": True, "version": forwarder, "dist_version": forwarder}
    lib = ENTRY["backend_runtime_library"]
    got = {
        "library": pc._backend_runtime_library_result("c", lib, package, "nixl", facts, "s"),
        "api_floor": pc._api_floor_result("c", ENTRY["api_floor"], ENTRY, package, "nixl", facts, "s", "0.5.23"),
    }
    return {k: "ok" if v is None else v.status for k, v in got.items()}


@pytest.mark.parametrize(("forwarder", "cu12", "cu13"), CASES)
def test_no_path_is_ok_where_another_leaves_an_unknown_torch_build_unknown(
    forwarder: str, cu12: str, cu13: str
) -> None:
    facts = _facts(cu12, cu13, None)
    unknown = _paths(forwarder, facts)
    if not (cu12 in ("1.1.0", "1.5.2") and cu13 in ("1.1.0", "1.5.2")):  # (not both installed)
        # the backend an unknown torch build takes is not settled (one not given as installed): no path is ok
        assert set(unknown.values()) == {"unknown"}, unknown
    # and a path ok (or fail) for a torch build not given is so for a CUDA 12 torch and a CUDA 13 one alike
    for path, status in unknown.items():
        if status in ("ok", "fail"):
            known = [_paths(forwarder, _facts(cu12, cu13, c))[path] for c in ("12.8", "13.0")]
            assert known == [status, status], (path, status, known)


@pytest.mark.parametrize(("forwarder", "cu12", "cu13"), CASES)
@pytest.mark.parametrize("torch_cuda", ["12.8", "13.0"])
def test_a_known_major_judges_the_floor_on_its_own_backend(
    forwarder: str, cu12: str, cu13: str, torch_cuda: str
) -> None:
    paths = _paths(forwarder, _facts(cu12, cu13, torch_cuda))
    own = cu12 if torch_cuda == "12.8" else cu13
    if own == "not given":  # (before: judged on the other major's backend, ok beside nixl-cu12 1.5.2)
        assert paths == {"library": "unknown", "api_floor": "unknown"}
    elif own == "absent":  # ImportError: the library item fails, the floor leaves it to that item
        assert paths == {"library": "fail", "api_floor": "ok"}
    else:
        assert paths == {"library": "ok", "api_floor": "ok" if own == "1.5.2" else "fail"}


@pytest.mark.parametrize(
    ("cu12", "cu13", "torch_cuda"),
    [("1.5.2", "not given", "13.0"), ("1.5.2", "absent", None), ("1.5.2", "not given", None)],
)
def test_the_api_floor_false_oks_fixed(cu12: str, cu13: str, torch_cuda: str | None) -> None:
    # each was ok on the API floor before (judged on nixl-cu12 1.5.2 alone) while the library item said unknown
    assert _paths("1.5.2", _facts(cu12, cu13, torch_cuda)) == {"library": "unknown", "api_floor": "unknown"}


def test_every_backend_installed_settles_an_unknown_torch_build() -> None:
    assert _paths("1.5.2", _facts("1.5.2", "1.5.2", None)) == {"library": "ok", "api_floor": "ok"}
    assert _paths("1.5.2", _facts("1.5.2", "1.1.0", None)) == {"library": "ok", "api_floor": "unknown"}
    assert _paths("1.5.2", _facts("1.1.0", "1.1.0", None)) == {"library": "ok", "api_floor": "fail"}


def test_the_check_as_a_whole_is_never_ok_for_an_unknown_torch_build_unless_ok_for_both() -> None:
    def status(forwarder: str, cu12: str, cu13: str, torch_cuda: str | None) -> str:
        facts = _facts(cu12, cu13, torch_cuda)
        facts["packages"]["nixl"] = {"installed": True, "version": forwarder, "dist_version": forwarder}
        got = pc.check_transfer_package("transfer_backend", "nixl", "nixl", facts, DATA, "0.5.23")
        return "ok" if got is None else got.status

    seen = set()
    for forwarder, cu12, cu13 in CASES:
        if status(forwarder, cu12, cu13, None) == "ok":
            seen.add((forwarder, cu12, cu13))
            assert status(forwarder, cu12, cu13, "12.8") == status(forwarder, cu12, cu13, "13.0") == "ok"
    assert seen == {("1.1.0", "1.5.2", "1.5.2"), ("1.5.2", "1.5.2", "1.5.2")}
