"""desched's exceptions and exit codes: one base class, one branch per kind of failure.

Every command turns a :class:`DeschedError` into one ``desched: <message>`` line on stderr and exit code
:data:`EXIT_ERROR`; nothing a user can cause ends in a traceback. The branches say what went wrong:

- :class:`UsageError`: how desched was called (arguments, options, a missing extra);
- :class:`ConfigError`: a desched configuration file that cannot be used;
- :class:`InputError`: input that cannot be read as text or YAML (file-level problems are DS001 findings instead
  when linting);
- :class:`KubeError`: the Kubernetes API server refused or failed a request;
- :class:`PolicyRefused`: a policy a command will not act on (migrate, render, simulate, run).
"""

from __future__ import annotations

__all__ = [
    "EXIT_ERROR",
    "EXIT_FINDINGS",
    "EXIT_OK",
    "ConfigError",
    "DeschedError",
    "InputError",
    "KubeError",
    "PolicyRefused",
    "UsageError",
]

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class DeschedError(Exception):
    """A failure desched reports as one line; the first argument is the message."""


class UsageError(DeschedError):
    """A problem with how desched was called."""


class ConfigError(DeschedError):
    """A desched configuration file (``.desched.yaml``) that cannot be read or has invalid settings."""


class InputError(DeschedError):
    """Input that cannot be read as text or YAML; ``line``/``column`` (1-based) say where."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class KubeError(DeschedError):
    """The API server (or the way to reach it) failed a request; ``status`` is the HTTP status when it answered.
    ``sent`` is False only when the request certainly never reached the server (no connection could be made): only
    then is a failed write known not to have happened."""

    def __init__(self, message: str, status: int | None = None, *, sent: bool = True, definite: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.sent = sent
        #: A 5xx that is the server's decision, not its failure: the Eviction API's 500 for a pod under several
        #: PodDisruptionBudgets (nothing was deleted; :func:`desched.runtime.kube` tells it apart)
        self.definite = definite


class PolicyRefused(DeschedError):
    """A policy a command refuses to act on: it would fail upstream, or the command cannot represent it. ``path`` is
    where in the policy, when known."""

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
