"""packages.normalise (string methods) gives the answer of PEP 503's pattern, re.sub(r"[-_.]+", "-", name).lower(),
and a probed audit compiles no pattern for it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.probes import packages
from stackcheck.probes.packages import normalise

PEP503 = re.compile(r"[-_.]+")


def reference(name: str) -> str:
    return PEP503.sub("-", name).lower()


@pytest.mark.parametrize(
    "name",
    ["torch", "Flash_Attn", "nvidia_cublas_cu12", "sgl-kernel", "a.-_b", "a---b", "-_.-", "", "x__y..z", "ÄÖ_ü",
     "İ_x", "zope.interface", "A--_--B", "_", ".a.", "sglang-router"],
)  # fmt: skip
def test_listed_names_normalise_as_pep_503_says(name: str) -> None:
    assert normalise(name) == reference(name)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aZ9-_.-_.İÅß ")), max_size=20) | st.text(max_size=12))
def test_generated_names_normalise_as_pep_503_says(name: str) -> None:
    assert normalise(name) == reference(name)


def test_the_module_holds_no_pattern_for_it() -> None:
    # the pattern was compiled on every probed start (lazily, on the first name of the first listing)
    assert not hasattr(packages, "_NORMALISE")
