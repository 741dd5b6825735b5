"""The one exception hierarchy of ragloom.

::

    RagloomError                 base; carries a human-readable message
    ├── ConfigError              a setting is missing or invalid
    ├── NotFoundError            the object does not exist *or the caller may not see it*
    ├── PermissionDeniedError    the caller is known but not allowed to do this
    ├── AuthenticationError      no or an unknown credential
    ├── InvalidRequestError      malformed or out-of-range input from a caller
    │   └── PayloadTooLargeError     a request body or upload over its configured size
    ├── RateLimitedError         a key called an expensive route too often (carries retry_after)
    ├── ConflictError            the request clashes with the current state (duplicate name, ...)
    ├── ParseError               a document could not be parsed (corrupt, encrypted, empty, ...)
    │   ├── UnsupportedFormatError   no parser handles this file type
    │   └── LimitExceededError       a document or task went over a configured limit (names it)
    ├── StoreError               the object store or the search store failed
    ├── ModelError               an embedding / chat / rerank model failed or is unreachable
    ├── TaskCancelledError       a task was cancelled while it ran
    │   └── TaskInterruptedError     the worker is stopping: the task goes back to the queue
    └── MissingDependencyError   a backend's package is not installed (says what to pip install)

The HTTP status of each is decided in one place: :func:`http_status`.
"""

from __future__ import annotations


class RagloomError(Exception):
    """Base class of every error ragloom raises on purpose."""

    status: int | None = None
    """The HTTP status of the response this error was read from (:mod:`ragloom.sdk`); None when it was
    raised in this process."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(RagloomError):
    pass


class NotFoundError(RagloomError):
    pass


class PermissionDeniedError(RagloomError):
    pass


class AuthenticationError(RagloomError):
    pass


class InvalidRequestError(RagloomError):
    pass


class PayloadTooLargeError(InvalidRequestError):
    pass


class RateLimitedError(RagloomError):
    """Too many calls; ``retry_after`` is the number of seconds to wait."""

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ConflictError(RagloomError):
    pass


class ParseError(RagloomError):
    pass


class UnsupportedFormatError(ParseError):
    pass


class LimitExceededError(ParseError):
    """A document or a task went over a configured limit; the message names the limit and its setting."""


class StoreError(RagloomError):
    pass


class ModelError(RagloomError):
    pass


class TaskCancelledError(RagloomError):
    pass


class TaskInterruptedError(TaskCancelledError):
    """The worker running the task is shutting down; the task is handed back to the queue."""


class MissingDependencyError(RagloomError):
    """A package a backend needs cannot be used. The message says how to install it:
    ``pip install 'ragloom[EXTRA]'`` when ``extra`` names one of ragloom's extras
    (``[project.optional-dependencies]`` in pyproject.toml), else the package itself by
    its PyPI name (a core dependency has no extra). ``problem`` replaces "is not
    installed" (e.g. a broken installation, which is then force-reinstalled)."""

    def __init__(self, package: str, extra: str | None = None, *, problem: str | None = None) -> None:
        target = f"ragloom[{extra}]" if extra else package
        pip = "pip install --force-reinstall" if problem else "pip install"
        super().__init__(f"{package} {problem or 'is not installed'}; install it with: {pip} '{target}'")
        self.package = package
        self.extra = extra


_STATUS: list[tuple[type[RagloomError], int]] = [
    (NotFoundError, 404),
    (PermissionDeniedError, 403),
    (AuthenticationError, 401),
    (InvalidRequestError, 400),
    (PayloadTooLargeError, 413),
    (RateLimitedError, 429),
    (ConflictError, 409),
    (UnsupportedFormatError, 415),
    (ParseError, 422),
    (LimitExceededError, 413),
    (ConfigError, 500),
    (StoreError, 503),
    (ModelError, 502),
    (TaskCancelledError, 409),
    (TaskInterruptedError, 503),
    (MissingDependencyError, 501),
]


def http_status(exc: RagloomError) -> int:
    """The HTTP status code for an error; the most specific class wins."""
    for cls in type(exc).__mro__:
        for known, status in _STATUS:
            if cls is known:
                return status
    return 500
