"""One small hierarchy of errors; every error a user can cause carries the fix in its message."""
from __future__ import annotations

import difflib
from collections.abc import Iterator
from contextlib import contextmanager


class AcousticBenchError(Exception):
    """Base class. `str(err)` is the one line shown to the user."""

    exit_code = 1


class UserError(AcousticBenchError):
    """Bad input: a flag, a file or a setting the user can fix. Exit code 2."""

    exit_code = 2


class ArchiveError(UserError):
    """The benchmark pack is missing, malformed or unsafe."""


class UnsafeArchiveError(ArchiveError):
    """A zip member would escape the target folder, is a link, or looks like a zip bomb."""


class BackendError(AcousticBenchError):
    """A model backend failed on one request. `retryable` says whether asking again can help; `overloaded` that the
    server said "later" (429, 503): the question is asked again without using up its attempts, and fewer go at once;
    `gone` that the endpoint itself ended (a replica cancelled): the question goes back to the queue for another one."""

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None, overloaded: bool = False,
                 gone: bool = False):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.overloaded = overloaded
        self.gone = gone


def unknown_name(kind: str, name: str, known: list[str]) -> UserError:
    """An 'unknown X' error that suggests the closest known names."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.4)
    if not close:
        lowered = {k.lower(): k for k in known}
        close = [lowered[k] for k in difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.4)]
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return UserError(f"unknown {kind} {name!r}.{hint} Known: {', '.join(known)}.")


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a batch scheduler's time limit, `timeout`, a closed terminal): unwinds like Ctrl-C, so a run
    keeps what it wrote and marks itself interrupted, and a build removes its staging folder."""

    def __init__(self, signum: int = 15):
        super().__init__(signum)
        self.signum = signum


# The signals that reached this command's handlers. Only the first raises: `timeout` sends its SIGTERM to the command
# and again to its process group, a person presses Ctrl-C twice, and a second exception landing while the first
# unwinds cut that short (a run's config.json half rewritten, or never marked interrupted). And an exception a handler
# raises can be lost: it surfaces in whatever code runs at that moment, and some swallow it (numpy.random's compiled
# module drops one raised while it is imported), so a command checks here before it puts a result in place
# (stop_if_signalled).
_signalled: list[int] = []


def stop_signals() -> list[int]:
    """Ctrl-C, SIGTERM and SIGHUP: the signals that ask a command to stop (those the platform has)."""
    import signal

    return [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]


def _interrupt(signum: int) -> KeyboardInterrupt:
    import signal

    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def _stop_on(signum, frame) -> None:
    _signalled.append(signum)
    if len(_signalled) == 1:
        raise _interrupt(signum)


def end_on_signals() -> None:
    """Ctrl-C, SIGTERM and SIGHUP (where the platform has them) each end a command by an exception that unwinds it,
    the first of them only; each is noted for stop_if_signalled. A run's event loop then leaves Ctrl-C to this
    handler too (asyncio.run sets its own only over Python's), so a second press cannot cut the first one's
    unwinding short either."""
    import signal

    _signalled.clear()
    for signum in stop_signals():
        signal.signal(signum, _stop_on)


def stop_if_signalled() -> None:
    """Raise again the interrupt of a signal that reached this command, where the exception its handler raised was
    swallowed on the way: a signal to stop must never be answered by a build put in place or a run going on."""
    if _signalled:
        raise _interrupt(_signalled[0])


@contextmanager
def noted_signals(*signals: int) -> Iterator[list[int]]:
    """Handlers that only note these signals (the list it yields), then the old ones back. Not SIG_IGN: a process's
    signal may land on any of its threads (numpy's BLAS keeps one), and an ignored one is gone, a Ctrl-C lost."""
    import signal

    caught: list[int] = []
    try:
        previous = {s: signal.signal(s, lambda signum, _frame: caught.append(signum)) for s in signals}
    except ValueError:  # not the main thread (acousticbench.evaluate from a worker): no signal reaches it anyway
        yield caught
        return
    try:
        yield caught
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block has done its few writes, then reach the handler they were
    meant for: a folder is never left half made (without its config.json) by a signal that landed in between."""
    import signal

    with noted_signals(*stop_signals()) as caught:
        yield
    if caught:
        signal.raise_signal(caught[0])


def run_command(command, *, interrupted: str) -> int:
    """Run a command-line entry point: a harness error prints its one line (exit 2 for user errors); Ctrl-C, SIGTERM,
    SIGHUP and a reader that went away (a pipe into `head`) print `interrupted` (what was kept, how to go on) and
    give 128 + the signal, as a shell reports it."""
    import sys

    from acousticbench.core.command_words import spelt

    interrupted = spelt(interrupted)
    try:
        status = command()
        stop_if_signalled()  # a signal whose exception was swallowed on the way is still the command's end
        return status
    except BrokenPipeError:  # stdout's reader is gone (SIGPIPE): nothing more can go there, stderr still may
        _silence_stdout()
        print(f"interrupted: the output's reader went away; {interrupted}", file=sys.stderr)
        return 141
    except AcousticBenchError as err:
        print(f"error: {spelt(str(err))}", file=sys.stderr)
        return err.exit_code
    except OSError as err:  # a full disk, a read-only folder: one line naming the file, never a chained traceback
        print(f"error: {os_error_line(err)}", file=sys.stderr)
        return 2
    except Exception as err:
        from acousticbench.core.memory_limit import out_of_memory, out_of_memory_line

        if not out_of_memory(err):
            raise
        print(f"error: {out_of_memory_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        _ignore_further_signals()
        _quiet_teardown()
        print(f"\ninterrupted: {interrupted}", file=sys.stderr)
        return 128 + (err.signum if isinstance(err, Terminated) else 2)


def _ignore_further_signals() -> None:
    """Once a command has unwound, a second Ctrl-C (or a scheduler's SIGTERM after it) must not kill the exit itself:
    that would end the process by the signal, not by 128 + it, with its closing line half-written."""
    import signal

    for signum in stop_signals():
        try:
            signal.signal(signum, signal.SIG_IGN)
        except ValueError:  # not the main thread: the signals are not ours to set
            return


def _quiet_teardown() -> None:
    """After a stop signal the interpreter collects what the interrupted event loop left behind (a pending task, an
    HTTP session it had no loop left to close): their complaints ("Task was destroyed but it is pending!", "Exception
    ignored in ...", "coroutine ... was never awaited") would follow the closing line by a hundred lines of tracebacks
    that say nothing about the run, whose records are already written and whose folder already says it stopped."""
    import logging
    import sys
    import warnings

    for name in ("asyncio", "aiohttp"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    warnings.simplefilter("ignore")
    sys.unraisablehook = lambda _: None


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's own flush at exit does not fail on the closed pipe again."""
    import os
    import sys

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def os_error_line(err: OSError) -> str:
    """One line for a failed read or write: what, where, and what to do."""
    import errno

    where = f" {err.filename}" if err.filename else ""
    what = err.strerror or type(err).__name__
    if err.errno == errno.ENOSPC:
        return (f"no space left on the device while writing{where}: free some space, then run the same command with "
                "--resume (what was written is kept and valid).")
    if err.errno in (errno.EDQUOT, errno.EFBIG):  # a quota or a file size limit (ulimit -f): full, for this user
        return (f"over the disk quota or file size limit while writing{where} ({what}): free some space or raise the "
                "limit, then run the same command with --resume (what was written is kept and valid).")
    if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EEXIST):
        return f"cannot write{where} ({what}): choose a folder you can write to."
    if err.errno == errno.ENOMEM:  # a map or a process that did not fit the memory limit
        from acousticbench.core.memory_limit import out_of_memory_line

        return out_of_memory_line(err)
    return f"{what}{where}."


def writable_folder(path, what: str, flag: str) -> None:
    """Prove a file can be written in `path` (or, while it does not exist yet, in the folder it would be made in),
    before anything is paid for; creates nothing."""
    import os
    import tempfile
    from pathlib import Path

    existing = Path(path).absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        if not existing.is_dir():
            raise NotADirectoryError(20, "not a folder", str(existing))
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".write-check-")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise UserError(f"cannot write to {what} {path} ({err.strerror or err}): choose another with {flag}.") from None
