"""The notebook client the runner's papermill uses: a cell whose kernel went idle while the client still waits for its
reply is stopped and named after STALL_S seconds (nbclient issue 312), and a kernel that has finished its cells is shut
down without an interrupt."""
from __future__ import annotations

import asyncio
from time import monotonic

from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine

ENGINE = "imbalanced_cl"    # the name papermill knows this client's engine by

# How long a cell may wait for its reply once its kernel said it is idle (seconds). A kernel sends a cell's
# execute_reply before its "idle" status, so the reply is already there: a client still waiting for it a minute later
# has lost it (nbclient issue 312: a widget cell sometimes waits out the whole per-cell limit, 900 s at ci, with the
# kernel idle). Read when a cell runs, so a test may set it lower.
STALL_S = 60.0
POLL_S = 1.0                # how often the wait is checked


class KernelStall(Exception):
    """A cell's kernel went idle and the client never got the cell's reply (nbclient issue 312)."""

    def __init__(self, cell, index: int, seconds: float):
        """The stalled cell (its count, index and first line) and how long the client waited on the idle kernel."""
        n = cell.get("execution_count")
        first = next((ln.strip() for ln in cell.source.splitlines() if ln.strip()), "")
        super().__init__(f"cell [{n if n is not None else ' '}] (index {index}, `{first}`) stalled: its kernel has "
                         f"been idle for {seconds:g} s, with no output, while the client still waits for the cell's "
                         "reply (nbclient issue 312, seen with widget cells); the notebook was stopped")


class WatchedClient(PapermillNotebookClient):
    """papermill's notebook client, which names a stalled cell (KernelStall) instead of waiting out its time limit,
    and tells its kernel manager when the kernel is idle (`km.idle`, read by execution.kernel_manager's shutdown)."""

    def papermill_execute_cells(self):
        """Execute the cells; after the last one (or a failed one) the kernel is idle."""
        super().papermill_execute_cells()
        self.km.idle = True

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive):
        """nbclient's wait for the cell's reply, stopped with KernelStall when the kernel's idle status came (the
        output poll ended) STALL_S seconds ago and the reply still has not."""
        reply = asyncio.ensure_future(super()._async_poll_for_reply(
            msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive))
        idle_since = None
        try:
            while not reply.done():
                await asyncio.wait({reply}, timeout=POLL_S)
                if reply.done() or not task_poll_output_msg.done():
                    continue
                idle_since = idle_since or monotonic()
                if monotonic() - idle_since >= STALL_S:
                    task_poll_kernel_alive.cancel()     # as nbclient does when a cell times out
                    self.km.idle = True                 # the kernel said so: it is shut down without an interrupt
                    raise KernelStall(cell, next(i for i, c in enumerate(self.nb.cells) if c is cell), STALL_S)
            return reply.result()
        finally:
            reply.cancel()      # a no-op once it is done; else (a stall, or this task cancelled) it waits no longer


class WatchedEngine(NBClientEngine):
    """papermill's nbclient engine, running WatchedClient."""

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None, stderr_file=None,
                                 start_timeout=60, execution_timeout=None, **kwargs):
        """NBClientEngine.execute_managed_notebook with WatchedClient: the same arguments reach the client."""
        from papermill.engines import logger
        kwargs = {k: v for k, v in kwargs.items() if k not in ("input_path", "timeout", "startup_timeout")}
        return WatchedClient(nb_man, timeout=execution_timeout, startup_timeout=start_timeout,
                             kernel_name=kernel_name, log=logger, log_output=log_output, stdout_file=stdout_file,
                             stderr_file=stderr_file, **kwargs).execute()


def register() -> str:
    """Register WatchedEngine with papermill (again is harmless: each process that runs notebooks calls it); its
    name."""
    from papermill.engines import papermill_engines
    papermill_engines.register(ENGINE, WatchedEngine)
    return ENGINE
