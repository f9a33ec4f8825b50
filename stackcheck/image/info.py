"""What an image says about itself: its layers (`LayerInfo`) and its config and manifest (`ImageInfo`),
as read by stackcheck.image.layout and carried by the view (stackcheck.image.view), which imports it from
here so that the view and the reader of the file sit in no import cycle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stackcheck.image.tree import printable


@dataclass(frozen=True)
class LayerInfo:
    digest: str | None  # the blob's digest (legacy docker save: the config's diff_id of the layer)
    size: int  # bytes of the blob as stored
    media_type: str | None  # as the manifest says (None for a legacy docker save)
    compression: str  # "none" | "gzip" | "zstd", from the blob's own first bytes


@dataclass
class ImageInfo:
    """What the image says about itself (its config and manifest), and what reading it ran into."""

    path: str
    format: str  # "docker-save" | "oci-dir" | "oci-tar"
    reference: str | None = None  # "repo:tag" as recorded in the file
    digest: str | None = None  # the image manifest's digest, when the file carries the manifest
    image_id: str | None = None  # the config's digest (docker's IMAGE ID)
    architecture: str | None = None
    os: str | None = None
    variant: str | None = None
    platform_chosen_by: str = ""
    layers: list[LayerInfo] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # allow-listed, secrets dropped
    labels: dict[str, str] = field(default_factory=dict)
    user: str | None = None
    entrypoint: list[str] = field(default_factory=list)  # the config's Entrypoint (raw; never reported as is)
    cmd: list[str] = field(default_factory=list)  # the config's Cmd (raw)
    workdir: str | None = None  # the config's WorkingDir
    warnings: list[str] = field(default_factory=list)
    #: Env / Entrypoint / Cmd -> why it was not read whole (not a list of strings, too many words): layout.py
    unread: dict[str, str] = field(default_factory=dict)
    #: the config's whole Env, for reading the image (PATH, PYTHONPATH, HOME); never put in a report
    raw_env: dict[str, str] = field(default_factory=dict, repr=False)

    def to_facts(self) -> dict[str, Any]:
        """The `facts.image` section."""
        from stackcheck.image.require import parse_nvidia_require
        from stackcheck.redact import redact_labels, redact_text

        return {
            "path": self.path,
            "format": self.format,
            "reference": self.reference,
            "digest": self.digest,
            "id": self.image_id,
            "architecture": self.architecture,
            "os": self.os,
            "variant": self.variant,
            "platform_chosen_by": self.platform_chosen_by,
            "layers": [
                {"digest": x.digest, "size": x.size, "media_type": x.media_type, "compression": x.compression}
                for x in self.layers
            ],
            "env": dict(self.env),
            "labels": redact_labels(self.labels),  # a build argument or a token in a source URL: masked
            "command": self.shown_command(),
            "workdir": printable(redact_text(self.workdir), 1000) if self.workdir else None,
            "nvidia_require": parse_nvidia_require(self.raw_env).to_facts(),
            "warnings": list(self.warnings),
        }

    @property
    def command(self) -> list[str]:
        """What a container of this image runs without arguments: Entrypoint followed by Cmd (docker's rule)."""
        return [*self.entrypoint, *self.cmd]

    def shown_command(self) -> list[str] | None:
        """The command as a report may carry it: secret flag values and token-shaped values masked,
        control characters escaped, at most 200 arguments."""
        if not self.command:
            return None
        from stackcheck.redact import redact_argv

        return [printable(a, 1000) for a in redact_argv(self.command[:200])]
