"""A command under a memory limit (`ulimit -v`, RLIMIT_AS): it starts only with room to work in, or says so in one
line; BLAS takes its buffer at the start, not mid-run (OpenBLAS cannot fail softly: it ends the process from C); and a
limit reached later is one line naming it, with what was written kept."""
from __future__ import annotations

import os
import sys

# what a run maps beyond numpy and its threads' stacks (measured on 2 cores: Oracle on 60 questions failed at times
# under 410 MB, never at 420; this asks for 473 MB there)
WORK_MB = 256
NUMPY_MB = 110  # numpy and its OpenBLAS with one thread, mapped at import (measured: 97 MB)
BLAS_THREADS = ("OPENBLAS_NUM_THREADS",)  # each BLAS thread maps its own stack and buffer when numpy is imported


def address_space_limit() -> int | None:
    """This process's soft RLIMIT_AS in bytes; None where there is none (or the platform has no such limit)."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def fewer_blas_threads() -> None:
    """Under a memory limit, one BLAS thread unless the user chose: OpenBLAS maps a stack and a buffer for each of
    the machine's cores when numpy is imported (gigabytes on a large node), more than the harness's small arrays need.
    Called before anything imports numpy."""
    if address_space_limit() is not None:
        for name in BLAS_THREADS:
            os.environ.setdefault(name, "1")


def room_lacking() -> str | None:
    """Under a memory limit: the one line refusing to start without room for a run, or None once BLAS has taken its
    buffer (now, while the room is known to be there)."""
    limit = address_space_limit()
    if limit is None:
        return None
    fewer_blas_threads()
    mapped = _mapped_bytes()
    if mapped is None:  # no /proc: nothing to measure against
        return None
    loaded = mapped + (0 if "numpy" in sys.modules else NUMPY_MB << 20)
    need = loaded + (_work_mb() << 20)
    if limit < need:
        return (f"the memory limit (ulimit -v) of {limit >> 20} MB is below the {need >> 20} MB a run needs here "
                f"({loaded >> 20} MB loaded, {_work_mb()} MB to work in): raise it to at least {need >> 20} MB "
                f"(ulimit -v {need >> 10}), or remove it (ulimit -v unlimited).")
    _take_blas_buffer()
    return None


def _work_mb() -> int:
    """Room to work in: WORK_MB, and a stack for each thread of the event loop's default pool (it grows with cores)."""
    stack_mb = 8
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
        stack_mb = 8 if soft == resource.RLIM_INFINITY else max(1, soft >> 20)
    except (ImportError, ValueError, OSError):
        pass
    return WORK_MB + (min(32, (os.cpu_count() or 1) + 4) + 2) * stack_mb


def _take_blas_buffer() -> None:
    """One matrix product, so OpenBLAS maps its buffer now, while the room is known to be there; later products reuse
    it, from any thread."""
    import numpy as np

    square = np.ones((256, 256))  # a smaller product runs on the stack and maps nothing
    square @ square


def _mapped_bytes() -> int | None:
    """The address space this process maps now (what RLIMIT_AS counts); None without Linux's /proc."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) << 10
    except (OSError, ValueError):
        return None
    return None


def out_of_memory(err: BaseException) -> bool:
    """Whether `err` says the process ran out of memory it may map: a MemoryError, a thread that could not start, a
    library whose file could not be mapped, or ENOMEM."""
    import errno

    if isinstance(err, MemoryError):
        return True
    text = str(err)
    if isinstance(err, RuntimeError) and "can't start new thread" in text:
        return True
    if isinstance(err, ImportError) and ("failed to map segment" in text or "cannot allocate memory" in text.lower()):
        return True
    return isinstance(err, OSError) and err.errno == errno.ENOMEM


def out_of_memory_line(err: BaseException) -> str:
    """The one line for memory (or, for a thread, processes) that ran out mid-command, naming the limit reached."""
    limit = address_space_limit()
    which = f"the memory limit (ulimit -v) of {limit >> 20} MB" if limit is not None else "the machine's memory"
    if isinstance(err, RuntimeError) and (processes := _process_limit()) is not None:  # a thread counts as one
        which += f" or the process limit (ulimit -u) of {processes}"
    return (f"out of memory: the command reached {which}; raise it, or run fewer requests at once (--concurrency), "
            "then run the same command with --resume (what was written is kept and valid).")


def _process_limit() -> int | None:
    try:
        import resource
    except ImportError:
        return None
    soft = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    return None if soft == resource.RLIM_INFINITY else soft
