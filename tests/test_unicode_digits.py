"""Words of digits that str.isdigit() takes and int() refuses ('²', '³': Unicode's superscripts, category No): every
place that checked a word with isdigit() before int() raised ValueError on them, which the command reported as an
internal error (a bug) instead of reading the word as not a number. Each now asks isdecimal(), whose characters
int() reads (the ASCII digits and the other decimal digits, '٣' included)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from imagebuild import docker_save

from stackcheck.cli import main
from stackcheck.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
H200 = str(ROOT / "tests/cases/h200-newest/facts.json")
SQUARED = "\u00b2"


@pytest.mark.parametrize(
    "flags",
    [
        ["--ep-size", SQUARED],  # refusals._ep_below_tp, _fp8_block_moe_split
        ["--ep", "1" + SQUARED],
        ["--elastic-ep-backend", "mooncake", "--max-ep-size", SQUARED],  # refusals._elastic_ep_scaling
    ],
)
def test_the_gate_reads_a_superscript_as_not_a_number(flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["gate", "--dry-run", "--facts", H200, "--", "python", "-m", "sglang.launch_server",
                 "--model-path", "M", "--tp", "2", *flags])  # fmt: skip
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert code in (0, 1)


def test_columns_of_a_superscript_is_no_width(monkeypatch: pytest.MonkeyPatch) -> None:
    from stackcheck.render.layout import output_width

    monkeypatch.setenv("COLUMNS", SQUARED)
    assert isinstance(output_width(), int)
    monkeypatch.setenv("COLUMNS", "\u0661\u0662\u0660")  # Arabic-Indic 120: a decimal number int() reads
    assert output_width() == 120


def test_words_read_as_numbers_elsewhere() -> None:
    from stackcheck.assembly.pipeline import parse_assume_gpu
    from stackcheck.launch.refusals import numeric
    from stackcheck.verdicts.package_checks import _cuda_major

    assert numeric("12." + SQUARED) is None and numeric("12.3") == (12, 3)
    assert _cuda_major(SQUARED + ".1") is None and _cuda_major("12.8") == 12
    with pytest.raises(UsageError):
        parse_assume_gpu("9.0x" + SQUARED)


def test_an_image_whose_sparse_size_is_a_superscript(tmp_path: Path) -> None:
    """A layer's pax record GNU.sparse.realsize '²' (a hostile image): the member's header size, as for any other
    size that is no number, not an internal error."""
    from stackcheck.image import open_image

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        info = tarfile.TarInfo("d/sparse.bin")
        info.size = 4
        info.pax_headers = {"GNU.sparse.realsize": SQUARED, "GNU.sparse.name": "d/sparse.bin"}
        tf.addfile(info, io.BytesIO(b"data"))
    image = docker_save(tmp_path / "sparse.tar", [buf.getvalue()])
    with open_image(image) as view:
        st = view.stat("/d/sparse.bin")
        assert st is not None and st.kind == "file" and st.size == 4


def test_box_and_image_words_read_as_not_numbers() -> None:
    """Words from the box's files and an image's config: a compute capability, a version, a mangled symbol name
    (a library's dynamic symbols), a container's CUDA requirement."""
    from stackcheck.facts.model import cc_tuple
    from stackcheck.image.require import parse_requirement
    from stackcheck.probes.jit import _major_minor
    from stackcheck.readers.binaries import _cc_tuple
    from stackcheck.readers.kernelsymbols import readable

    assert cc_tuple("9." + SQUARED) is None and cc_tuple("9.0") == (9, 0)
    assert _cc_tuple(SQUARED + ".0") is None and _cc_tuple("9.0") == (9, 0)
    assert _major_minor("12." + SQUARED) is None and _major_minor("12.8.1") == "12.8"
    assert isinstance(readable("_ZN3c10" + SQUARED + "xE"), str)  # (no ValueError)
    assert readable("_ZN3c104cuda9SetDeviceEab") == "c10::cuda::SetDevice"
    req, errors = parse_requirement("NVIDIA_REQUIRE_CUDA", "cuda>=" + SQUARED + ".1")
    assert req.alternatives == () and errors == [
        f"NVIDIA_REQUIRE_CUDA: 'cuda>={SQUARED}.1': '{SQUARED}.1' is not a version"
    ]
