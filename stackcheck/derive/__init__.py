"""Deriving manifest facts from a release's own files (issue 18).

Pure readers over a release (a wheel read as a zip, an unpacked wheel, or an installed distribution):
`tree` and `zipmember` (where the bytes come from), `metadata` (pins and extras), `flags` (the server's
arguments), `kernels` (SASS/PTX of shared objects, through stackcheck.readers.elf/fatbin), `release` (all of
them for one release, each fact with its file and line). `compare`, `emit` and `report` serve
`stackcheck manifests derive`; `decide`, `judge`, `installed` and `cache` judge an installed release newer
than the data at audit time. Nothing here imports or runs the code it reads.

This module imports nothing: the audit imports the parts it needs only when a release is newer than the data.
"""
