"""Worker start-up deaf to Ctrl-C: the campaign's fork server imports this module, and every worker forked from it
ignores SIGINT from its first instruction until it is ready.

A worker forked by multiprocessing re-imports the parent's main module (`spawn.prepare`) before it runs anything of
Dask's. A main script that re-arms Ctrl-C at import (`signal.signal(SIGINT, default_int_handler)`, as a script
started in the background must) made a Ctrl-C that came while a worker was still importing print that worker's
KeyboardInterrupt traceback beside the campaign's one `[stopped]` line (issue 51: 1 CI run in 3 here). Wrapped here,
`prepare` runs with SIGINT ignored, a KeyboardInterrupt raised inside it ends the worker without a word (the campaign
got the same Ctrl-C and is closing the cluster), and SIGINT is ignored again once the main module is in.
"""
from __future__ import annotations

import os
import signal
from multiprocessing import spawn

_prepare = spawn.prepare


def prepare(data) -> None:
    """multiprocessing.spawn.prepare with Ctrl-C ignored before and after it, and a Ctrl-C inside it a silent exit."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _prepare(data)
    except KeyboardInterrupt:
        os._exit(130)       # no traceback, no atexit: the campaign closing the cluster reports the stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)


spawn.prepare = prepare     # imported once, by the fork server: its workers inherit the wrapped function
