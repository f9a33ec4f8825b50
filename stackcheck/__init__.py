"""stackcheck: audit a GPU box before it serves large language models."""

__version__ = "0.1.0"
