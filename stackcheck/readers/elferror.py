"""What a caller of the ELF reader (stackcheck/readers/elf.py) needs without reading a file: its error and the
machine numbers (e_machine) the readers compare. A module of its own so that a probe whose every answer is kept
between runs (stackcheck/readers/kept.py: audit --deep's library probe) can catch the error and name the machines
without importing the reader itself (issue 21: ~6 M instructions of the reader's classes and struct layouts)."""

from __future__ import annotations

#: e_machine values (the System V ABI's registry, as glibc's elf.h names them)
EM_X86_64 = 62
EM_AARCH64 = 183
EM_CUDA = 190


class ElfError(Exception):
    """The file is not a readable ELF64 little-endian object; the message names the file and the place."""
