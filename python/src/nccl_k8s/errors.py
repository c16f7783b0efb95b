"""Errors of the package: one exception class per error code of the C++ runtime.

``str(error)`` reads like the runtime's ``Status::ToString()`` ("invalid env: NCCLJOB_INDEX is not
set; ..."), so a Python trainer and a C++ trainer of the same job log the same words.
"""

from __future__ import annotations


class NcclK8sError(Exception):
    """Base class; ``code`` names the kind of error, ``message`` says what to do."""

    code = "unknown"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class InvalidEnvError(NcclK8sError):
    """The env contract (docs/contracts.md) is missing or malformed."""

    code = "invalid env"


class SidecarUnavailableError(NcclK8sError):
    """The sidecar could not be reached, refused a request or answered unexpectedly."""

    code = "sidecar unavailable"


class DeadlineExceededError(NcclK8sError):
    """The init deadline (NCCLJOB_INIT_TIMEOUT_SECONDS) passed."""

    code = "deadline exceeded"


class StaleAttemptError(NcclK8sError):
    """The job already runs a later attempt: this pod is stale and should exit."""

    code = "stale attempt"


class InvalidArgumentError(NcclK8sError, ValueError):
    """A caller passed something unusable (an id that is not 128 bytes, a bad URL)."""

    code = "invalid argument"
