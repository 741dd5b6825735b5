"""Run the ``ragloom`` command line as a test: in this process by default, or in a child process.

A child process costs about three seconds of start-up per command (Python, the imports, the
in-process API), and the suite runs several hundred commands. In this process a command runs through
the same entry point (:func:`ragloom.cli.main`: the option parsing, the error handling and exit codes,
``--json``'s one document on stdout), with the same environment (no ``RAGLOOM_*`` variable but the
test's own settings), stdin, stdout and stderr of its own, its log lines on its stderr, and a fresh
:class:`ragloom.cli.State` — a new ``Context`` on the data directory, closed when the command ends, as
a process would leave it. What only a process shows (start-up, signals, two commands at once on one
data directory) is tested with real processes: ``tests/test_cli_contract.py``, ``tests/test_cli_logging.py``,
``tests/processes.py``; ``tests/test_readme.py`` runs a README command here when bash would only start it
(no expansion, redirection or pipe), and the rest with bash. ``RAGLOOM_TEST_CLI=process`` runs every
command in a child process, as before.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner

from tests.shared import child_environment

CHILD_PROCESSES = os.environ.get("RAGLOOM_TEST_CLI") == "process"
_LOCK = threading.Lock()  # one command at a time: a command swaps the process's stdio and environment


def _environment(settings: Mapping[str, str]) -> dict[str, str | None]:
    """The command's environment as a child would get it (:func:`tests.shared.child_environment`) with
    ``settings``: the variables to remove map to None."""
    kept = child_environment()
    env: dict[str, str | None] = {k: None for k in os.environ if k not in kept}
    env.update(settings)
    return env


def run(args: list[str], *, stdin: str | None = None, settings: Mapping[str, str] | None = None,
        timeout: float = 600, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``ragloom ARGS`` with only ``settings`` as RAGLOOM_* variables, in ``cwd`` (else this process's);
    its exit code, stdout and stderr."""
    settings = dict(settings or {})
    if CHILD_PROCESSES:
        removed = _environment(settings)
        env = {k: v for k, v in os.environ.items() if k not in removed} | dict(settings)
        return subprocess.run([sys.executable, "-m", "ragloom.cli", *args], input=stdin, capture_output=True,
                              text=True, env=env, timeout=timeout, cwd=cwd)
    with _LOCK:
        here = os.getcwd()
        if cwd is not None:
            os.chdir(cwd)
        try:
            return _in_process(args, stdin, settings)
        finally:
            os.chdir(here)


def _in_process(args: list[str], stdin: str | None, settings: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    import ragloom.cli
    from ragloom.cli import _app
    from ragloom.logs import VERBOSE_ENV

    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    saved_argv = sys.argv
    saved_levels = {name: logger.level for name, logger in logging.root.manager.loggerDict.items()
                    if isinstance(logger, logging.Logger)}
    runner = CliRunner()
    env = _environment(settings)
    env.setdefault(VERBOSE_ENV, None)  # setup_logging sets it for child processes: put it back afterwards
    _app.state.__init__()  # type: ignore[misc]
    saved_width = _app.out._width
    _app.out.width = 1000  # a child's stdout is a pipe without COLUMNS: no width limit (``_pipe_width``)
    code = 0
    with runner.isolation(input=stdin, env=env) as (out, err, _both):
        root.handlers = []  # the command installs its own log handler on its stderr, as in a process
        sys.argv = ["ragloom", *args]
        try:
            ragloom.cli.main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.argv = saved_argv
            _app.out._width = saved_width
            _close(_app.state)
            root.handlers, root.level = saved_handlers, saved_level
            for name, level in saved_levels.items():
                logging.getLogger(name).setLevel(level)
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return subprocess.CompletedProcess(["ragloom", *args], code, stdout, stderr)


def _close(state: object) -> None:
    """What ending the process would release: the background worker thread, the data directory's
    handles and sandbox processes."""
    client = getattr(state, "_client", None)
    if client is not None and hasattr(client, "stop_processing"):
        client.stop_processing()
    ctx = getattr(state, "_ctx", None)
    if ctx is not None:
        ctx.close()
    state.__init__()  # type: ignore[misc]


def ragloom(home: Path, *args: str, check: bool = True, stdin: str | None = None,
            **settings: str) -> subprocess.CompletedProcess[str]:
    """``ragloom --home HOME ARGS``, with no RAGLOOM_* variable but ``settings``; raises when it fails
    and ``check``."""
    proc = run(["--home", str(home), *args], stdin=stdin, settings=settings)
    if check and proc.returncode != 0:
        raise AssertionError(f"ragloom {args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc
