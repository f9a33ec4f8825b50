"""irev73: refusal hicache-unified-memory-host-pool's message told the user that a --mem-fraction-static leaving room
for the host pool with no weights is allowed by the gate ("the gate allows such a launch"); since ifc54's merge
(672483db) the code judges even that best case unknown (the host's own use and SGLang's memory beyond the static
pools share the one memory), so the advice promised an allow the gate never gives."""

from __future__ import annotations

from stackcheck.knowledge.loader import load


def test_the_message_promises_no_allow() -> None:
    rules = load([], env={}).launch["refusals"]["rules"]
    (rule,) = [r for r in rules if r.get("id") == "hicache-unified-memory-host-pool"]
    # fails before the fix
    assert "allows such a launch" not in rule["message"]
    assert "unknown" in rule["message"]
