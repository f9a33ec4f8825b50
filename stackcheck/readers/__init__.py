"""Readers of the box's files: the filesystem view every reader and probe reads through (fsview: the host,
a root directory, an image), binary architectures, shared-library resolution, source tables read with `ast`."""
