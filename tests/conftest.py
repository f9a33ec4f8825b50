"""Shared test set-up: make helper modules in tests/ (fake_nvml) importable under importlib import mode."""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = str(Path(__file__).parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
