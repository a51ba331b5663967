"""The library's errors: every failure a user can act on is a LocalsidecarError
(one line of text). Only localsidecar.cli turns them into Click's exit code 2."""

from localsidecar.backend.errors import BackendError, ConfigError, DecodeError, LocalsidecarError

__all__ = ["BackendError", "ConfigError", "DecodeError", "LocalsidecarError"]
