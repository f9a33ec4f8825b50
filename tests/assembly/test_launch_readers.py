"""pipeline._launch_readers: per launch fact, the items reevaluate judges again, found once per manifests; the same
items its straightforward reading finds (`"launch.K"` searched in each item's rules text), for every launch fact the
shipped rules name, their prefixes and extensions, and generated rules holding tricky strings (escaped quotes,
backslashes, `launch.` alone, a fact named in a message); and reevaluate judges the same items with it."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly import pipeline
from stackcheck.assembly.options import Options
from stackcheck.knowledge.loader import load

ROOT = Path(__file__).resolve().parents[2]


class _Manifests:
    """What _launch_readers reads of a Manifests: its features, checks and memo."""

    def __init__(self, features: list[Any], checks: list[Any]) -> None:
        self.features = features
        self.checks = checks
        self._derived: dict[str, dict[Any, Any]] = {}

    def derived(self, name: str) -> dict[Any, Any]:
        return self._derived.setdefault(name, {})


def _assert_as_searched(manifests: Any, keys: set[str]) -> None:
    index = pipeline._launch_readers(manifests)
    for item in (*manifests.features, *manifests.checks):
        text = json.dumps(item.get("rules"))
        for k in keys:
            if '"' in k:
                continue  # (reevaluate searches the texts for such a fact)
            assert (id(item) in index.get(k, frozenset())) == (f'"launch.{k}"' in text), (item.get("id"), k)


def test_the_shipped_rules_as_searched() -> None:
    manifests = load([])
    named = set()
    for item in (*manifests.features, *manifests.checks):
        text = json.dumps(item.get("rules"))
        named |= {part.split('"', 1)[0] for part in text.split('"launch.')[1:]}
    assert {"mla", "draft_mla", "mla_kv_rope", "tp"} <= named
    keys = named | {k[:-1] for k in named} | {k + "x" for k in named} | {"", "nope", "m", "draft"}
    _assert_as_searched(manifests, keys)


PIECES = ['"', "\\", "launch.", "launch", ".", "mla", "draft_mla", "a b", "é", "\n", "{", "}"]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice([*PIECES, rng.choice(string.ascii_lowercase)]) for _ in range(rng.randint(0, 6)))


def _rule(rng: random.Random) -> dict[str, Any]:
    fact = rng.choice(["launch." + _text(rng), _text(rng), "launch.mla", "launch.", "gpu.cc"])
    rule: dict[str, Any] = {"id": _text(rng), "require": {"fact": fact, "op": "==", "value": _text(rng)}}
    if rng.random() < 0.5:
        rule["when"] = {"any": [{"fact": "launch." + _text(rng)}, {"not": {"fact": _text(rng)}}]}
    if rng.random() < 0.5:
        rule["message"] = f'"launch.{_text(rng)}" {_text(rng)}'
    return rule


@pytest.mark.parametrize("seed", range(30))
def test_generated_rules_as_searched(seed: int) -> None:
    rng = random.Random(seed)
    items = [{"id": f"i{n}", "rules": [_rule(rng) for _ in range(rng.randint(0, 4))]} for n in range(12)]
    manifests = _Manifests(items[:8], items[8:])
    keys = {_text(rng) for _ in range(60)} | {"", "mla", "draft_mla"}
    for item in items:
        text = json.dumps(item["rules"])
        keys |= {part.split('"', 1)[0] for part in text.split('"launch.')[1:]}
        keys |= {part[:3] for part in text.split('"launch.')[1:]}
    _assert_as_searched(manifests, keys)


def test_an_item_added_in_memory_is_indexed() -> None:
    manifests: Any = _Manifests([{"id": "a", "rules": [{"require": {"fact": "launch.mla"}}]}], [])
    assert len(pipeline._launch_readers(manifests)["mla"]) == 1
    manifests.features.append({"id": "b", "rules": [{"require": {"fact": "launch.mla"}}]})
    assert len(pipeline._launch_readers(manifests)["mla"]) == 2


def test_reevaluate_judges_the_items_the_texts_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from stackcheck.verdicts import engine

    opts = Options(facts_file=str(ROOT / "tests" / "cases" / "h200-newest" / "facts.json"), launch={"tp": 2})
    report, ctx = pipeline.build_report(opts, want_plan=False)
    judged: list[str] = []
    real_feature, real_check = engine.evaluate_feature, engine.evaluate_check

    def feature(f: Any, c: Any, *a: Any) -> Any:
        judged.append(f["id"])
        return real_feature(f, c, *a)

    def check(f: Any, c: Any, *a: Any) -> Any:
        judged.append(f["id"])
        return real_check(f, c, *a)

    monkeypatch.setattr(engine, "evaluate_feature", feature)
    monkeypatch.setattr(engine, "evaluate_check", check)
    for launch in ({"mla": True}, {"mla_kv_rope": "512/64", "model_config_read": True}, {"draft_mla": False}):
        judged.clear()
        pipeline.reevaluate(report.copy(), ctx, Options(launch={"tp": 2}), launch)
        texts = {str(i.get("id")): json.dumps(i.get("rules")) for i in (*ctx.manifests.features, *ctx.manifests.checks)}
        named = [i for i, t in texts.items() if any(f'"launch.{k}"' in t for k in launch)]
        assert judged and set(judged) == set(named), launch  # (an item may judge itself with other releases too)
