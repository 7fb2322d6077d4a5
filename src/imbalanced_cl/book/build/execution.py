"""One notebook run with papermill: its parameters checked first, its kernel given the run's environment (and
started again when it dies before any cell), its executed copy written atomically and scrubbed of this machine's
directories."""
from __future__ import annotations

import os
from pathlib import Path

from ...validate import ParameterError
from . import kernels
from .cache import builder_paths, scrub
from .params import check_notebook


def check_params(nb: Path, params: dict, where: str = "") -> None:
    """Refuse parameters the notebook does not declare or its config class rejects (one line per error)."""
    lines = check_notebook(nb, params, where)
    if lines:
        raise ParameterError("\n".join(lines))


# The longest a cell may run before the run stops with one line naming it, per profile (seconds; None: no limit).
# nbclient waits forever by default, and a kernel message lost under load once hung a ci book in the test suite. A ci
# cell takes seconds and a default cell minutes on a 2-core laptop, so these limits only catch a run that no longer
# moves; a paper cell runs for hours (the campaign has its own budget), and a profile of the user's own is not limited.
CELL_TIMEOUT_S: dict[str, float | None] = {"ci": 900.0, "default": 2 * 3600.0, "paper": None}


def cell_timeout(profile: str) -> float | None:
    """The per-cell time limit of a profile (CELL_TIMEOUT_S), None for no limit."""
    return CELL_TIMEOUT_S.get(profile)


def timed_out_cell(partial: Path) -> str:
    """The cell a timed-out run was in, as "cell [n] (index i)", read from papermill's partial output (the last cell
    it started); "a cell" when the partial output cannot tell."""
    import nbformat
    try:
        cells = nbformat.read(partial, as_version=4).cells
    except Exception:   # no partial output yet, or a half-written one
        return "a cell"
    started = [i for i, c in enumerate(cells) if c.get("metadata", {}).get("papermill", {}).get("start_time")]
    if not started:
        return "a cell"
    i = started[-1]
    n = cells[i].get("execution_count")
    return f"cell [{n if n is not None else ' '}] (index {i})"


# A kernel that dies before replying to kernel_info has run no cell: most often two kernels started at once raced for
# one free TCP port (zmq "Address already in use"). Starting it again is safe, so that failure is retried this often.
KERNEL_START_RETRIES = 1


def kernel_manager(env: dict[str, str]):
    """A kernel manager class whose kernels get `env` on top of this process's environment: what a run passes to
    its notebook's kernel (profile, executed folder, threads) without writing it into this process's os.environ.
    Its kernels log errors only (kernels.QUIET)."""
    from jupyter_client.manager import AsyncKernelManager

    class EnvKernelManager(AsyncKernelManager):
        """AsyncKernelManager that adds the run's variables to each kernel's environment, and quiets its log."""

        idle = False    # set by client.WatchedClient: the kernel has finished its cells (or said it is idle)

        async def _async_pre_start_kernel(self, **kw):
            kw["env"] = {**(kw.get("env") or os.environ), **{k: str(v) for k, v in env.items()}}
            kw["extra_arguments"] = [*(kw.get("extra_arguments") or []), *kernels.QUIET]
            return await super()._async_pre_start_kernel(**kw)

        async def _async_interrupt_kernel(self):
            # jupyter_client interrupts a kernel (SIGINT) before it asks it to shut down, to stop a running cell. An
            # idle kernel ignores SIGINT, except in the instant between sending its last reply (papermill's final
            # kernel_info) and ignoring SIGINT again: a SIGINT there made it log "[IPKernelApp] ERROR |
            # KeyboardInterrupt caught in kernel." on a build that succeeded (issue 65; 1 run in 10 of a two-cell
            # notebook). So an idle kernel is only asked to shut down; a cell past its time limit is still interrupted.
            if not (self.shutting_down and self.idle):
                await super()._async_interrupt_kernel()

    return EnvKernelManager


def run_papermill(nb: Path, tmp: Path, params: dict, cwd: Path, env: dict | None = None,
                  timeout: float | None = None) -> None:
    """papermill.execute_notebook, its kernel given `env` on top of this process's environment, each cell limited to
    `timeout` seconds (None: no limit), the kernel started again (KERNEL_START_RETRIES times) when it died before any
    cell."""
    import papermill as pm

    from .client import register
    extra = {"kernel_manager_class": kernel_manager(env or {}),     # every kernel quiet, with or without env
             "execution_timeout": timeout, "engine_name": register()}     # a stalled cell named (client.py)
    for attempt in range(KERNEL_START_RETRIES + 1):
        try:
            pm.execute_notebook(str(nb), str(tmp), parameters=params, kernel_name="python3",
                                language="python", cwd=str(cwd), progress_bar=False, **extra)
            return
        except RuntimeError as e:
            if "before replying to kernel_info" not in str(e) or attempt == KERNEL_START_RETRIES:
                raise
            print(f"[retry]   {nb.name}: the kernel died while starting ({e}); starting it again", flush=True)


def execute(nb: Path, out: Path, params: dict, cwd: Path, stamp: dict | None = None,
            out_root: Path | None = None, env: dict | None = None, partial: Path | None = None,
            timeout: float | None = None) -> tuple[bool, str]:
    """Run one notebook with papermill into `out` atomically, its kernel given `env`; return (ok, message).

    papermill writes a `.NAME.partial.ipynb` beside `out` (or at `partial`) as it goes; only a run that finishes
    replaces `out`.
    A failure, an error, a cell running past `timeout` seconds (None: no limit) or Ctrl-C (KeyboardInterrupt,
    re-raised) removes the partial file and leaves the previous executed copy as it was. `stamp` is merged into the
    executed copy's metadata.imbalanced_cl; the copy names no directory of this machine (scrub: paths under `cwd`
    and `out_root` become relative).
    """
    import nbformat
    import papermill as pm
    from nbclient.exceptions import CellTimeoutError

    from .client import KernelStall
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(partial) if partial is not None else out.with_name(f".{out.stem}.partial.ipynb")
    try:
        run_papermill(nb, tmp, params, cwd, env, timeout)
        done = nbformat.read(tmp, as_version=4)
        done.metadata.setdefault("imbalanced_cl", {}).update(stamp or {})
        done.metadata.setdefault("papermill", {})["output_path"] = str(out.resolve())  # not the partial file
        subs = builder_paths(cwd, out_root or out.parent)
        nbformat.write(nbformat.from_dict(scrub(done, subs)), tmp)
    except pm.PapermillExecutionError as e:
        return False, f"cell [{e.exec_count}] (index {e.cell_index}): {e.ename}: {e.evalue}"
    except CellTimeoutError:    # nbclient's message quotes the whole cell: one line instead
        return False, (f"{timed_out_cell(tmp)} ran past the per-cell limit of {timeout:g} s and was stopped (a kernel "
                       "that no longer answers, or a run far slower than its profile plans)")
    except KernelStall as e:
        return False, str(e)
    except Exception as e:  # kernel died, bad notebook, ...
        return False, f"{type(e).__name__}: {e}"
    else:
        os.replace(tmp, out)
        return True, "ok"
    finally:
        tmp.unlink(missing_ok=True)  # after a failure, an error or Ctrl-C; a no-op after os.replace
