"""Processes that must not outlive the one that started them."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Linux: the kernel sends ``sig`` to this process when its parent dies (for a child,
    call it between fork and exec: ``preexec_fn``)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)


def exit_with_parent(poll_s: float = 1.0) -> None:
    """A uvicorn worker stops serving once its master is gone (kill -9 of the master would
    otherwise leave workers holding the port, and a restart fails with 'address in use')."""
    parent = os.getppid()
    die_with_parent(signal.SIGTERM)

    def watch() -> None:  # portable fallback, and covers the race before prctl
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGTERM)
                return

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
