"""The library's error types. They live at the bottom layer so the backend can
raise them without importing anything above it; `localsidecar.errors`
re-exports them for everyone else."""

from __future__ import annotations


class LocalsidecarError(Exception):
    """Bad input or an environment problem the user can fix. The message is one
    line; the command-line boundary prints it and exits with code 2."""

    def __str__(self) -> str:
        return " ".join(super().__str__().split())

    def format_message(self) -> str:
        """The one-line message (the name Click's exceptions use for it)."""
        return str(self)


class ConfigError(LocalsidecarError, ValueError):
    """A setting out of its range or not one of its choices (SpecConfig,
    GGUFDraft's arguments, a draft mode): the user's to fix, and a ValueError
    for code that catches bad values as such."""


class BackendError(LocalsidecarError):
    """llama.cpp refused something (a model file, a context, a decode)."""


class DecodeError(BackendError):
    """llama_decode returned a non-zero code; `code` keeps it."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
