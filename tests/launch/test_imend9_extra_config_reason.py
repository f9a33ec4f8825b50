"""imend9 (irev75's leftover): check_storage_config told a file that does not exist from one that is not JSON by the
reader's message ("does not exist" in it), so a .toml / .yaml extra config file whose path holds those words (read,
not JSON, as a TOML file is) failed as absent, where SGLang parses it as TOML / YAML: unknown. The reader's tag says
it now: ("absent", why) for a file the server cannot open, ("missing", why) for one that is not JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch.gate_preflight import _storage_config_reader
from stackcheck.readers.fsview import HostView
from stackcheck.verdicts.package_checks import check_storage_config

ODD = "/srv/does not exist/store"


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _read_by_tag(tag: str, why: str) -> Any:
    return lambda path: (tag, f"{path} {why}")


@pytest.mark.parametrize("ext", [".toml", ".yaml", ".yml"])
def test_a_toml_or_yaml_file_in_a_path_holding_the_words_is_unknown(ext: str, data: Any) -> None:
    read = _read_by_tag("missing", "is not JSON (json.load raises)")
    got = check_storage_config("mooncake", f"@{ODD}{ext}", {}, data, "0.5.23", read)
    assert got is not None and got.status == "unknown", got


def test_absent_and_not_json_fail_by_the_tag(data: Any) -> None:
    absent = check_storage_config("mooncake", "@/x/s.toml", {}, data, "0.5.23", _read_by_tag("absent", "is gone"))
    assert absent is not None and absent.status == "fail" and "FileNotFoundError" in absent.message, absent
    bad = check_storage_config("mooncake", "@/x/s.json", {}, data, "0.5.23", _read_by_tag("missing", "is not JSON"))
    assert bad is not None and bad.status == "fail" and "not JSON" in bad.message, bad


def test_the_live_reader_tags_an_absent_file_absent(tmp_path: Path) -> None:
    read = _storage_config_reader(HostView(), str(tmp_path), True)
    assert read(str(tmp_path / "none.json"))[0] == "absent"
    (tmp_path / "bad.json").write_text("{nope")
    assert read(str(tmp_path / "bad.json"))[0] == "missing"


@pytest.mark.parametrize("backend", ["hf3fs", "nixl", "aibrix", "eic", "lmcache", "file"])
def test_other_backends_open_and_parse_the_file_at_start(backend: str, data: Any) -> None:
    # (the HiCache cache parses @FILE before it builds any backend, 0.5.9-0.5.23: storage_configs.extra_config_file);
    # before, only Mooncake's entry judged the file: these were passed with the file absent
    def status(text: str, read: Any, release: str = "0.5.23", offload: bool = False) -> str | None:
        got = check_storage_config(backend, text, {}, data, release, read, not offload)
        return None if got is None else got.status

    assert status("@/cfg/x.json", _read_by_tag("absent", "does not exist")) == "fail"
    assert status("@/cfg/x.json", _read_by_tag("missing", "is not JSON")) == "fail"
    assert status("@/cfg/x.ini", lambda p: ("read", {})) == "fail"
    assert status("@/cfg/x.toml", _read_by_tag("absent", "does not exist")) == "fail"
    assert status(f"@{ODD}.toml", _read_by_tag("missing", "is not JSON")) == "unknown"
    assert status("@x.json", _read_by_tag("unread", "a relative path")) == "unknown"
    assert status("@/cfg/x.json", lambda p: ("read", {"a": 1})) is None  # (what the backend reads: not judged)
    assert status('{"a": 1}', _read_by_tag("absent", "")) is None  # (text, not a file: as before)
    assert status("@/cfg/x.json", _read_by_tag("absent", ""), release="0.5.8") is None  # (no @ form before 0.5.9)
    assert status("@/cfg/x.json", _read_by_tag("absent", ""), offload=True) is None  # (a PD decode offload: as before)
