"""imend10: _find_launch_level noted what it read before the launch (env policy, root change, srun's copies and GPU
options from its environment, a wrapper, the unplaced word, the level's words) with six calls repeated at each of its
three returns that found the launch and again in _env_seen, so a new return could forget one. One record (_Seen)
holds them now and each return notes it once; the iterative `env` loop (irobust8) is kept."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


GPU_ENV = [("--gpus-per-task=1 (from SLURM_GPUS_PER_TASK in its environment)", 1)]


@pytest.mark.parametrize(
    ("line", "notes", "want"),
    [
        # the launch among the words: every note of the srun level
        (["srun", "-n2", "--export=NONE", *LAUNCH], [(3, False)],
         {"env_policy": ["srun"], "srun_copies": ["-n 2 without -N"], "srun_env_gpus": GPU_ENV}),
        # through an `env -i` that runs it: the whole environment given, no policy noted
        (["srun", "--export=NONE", "env", "-i", "A=1", *LAUNCH], [(2, True)],
         {"env_policy": None, "srun_copies": None, "srun_env_gpus": GPU_ENV}),
        # in a shell's string
        (["srun", "--export=NONE", "bash", "-c", " ".join(LAUNCH)], [(4, False)],
         {"env_policy": ["srun"], "srun_copies": None, "srun_env_gpus": GPU_ENV}),
    ],
)  # fmt: skip
def test_each_return_notes_the_record_once(
    line: list[str], notes: list[tuple[int, bool]], want: dict[str, Any], mapping: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[int, bool]] = []
    real = gate._Seen.note

    def spy(self: Any, target: int, level: Any, cleared: bool = False) -> None:
        calls.append((target, cleared))
        real(self, target, level, cleared)

    monkeypatch.setattr(gate._Seen, "note", spy)
    trace: dict[str, Any] = {"env_stops": []}
    entry, _, _ = gate.find_launch(line, mapping, {"SLURM_GPUS_PER_TASK": "1"}, trace)
    assert entry == "launch-server"
    assert calls == notes
    assert {key: trace.get(key) for key in want} == want
    assert trace["levels"][0] == (line if notes[0][0] == 3 else line[: 3 if "bash" in line else 2])  # (words before)
