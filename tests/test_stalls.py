"""Builds that never stall (issue 65): notebook 07's widget cell opens no comm without a front end, a cell whose kernel
went idle while the client still waits is named and stopped within STALL_S, and a build that succeeds prints no
kernel ERROR line."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from imbalanced_cl.book.build import client
from imbalanced_cl.book.build import runner as book

from tiny_book import tiny_book

ROOT = Path(__file__).resolve().parents[1]




# The cell's reply is dropped by the kernel that sends it: the kernel goes idle and the client waits for a reply
# that never comes, the state nbclient issue 312 leaves a widget cell in.
LOST_REPLY = '''k = get_ipython().kernel
send = k.session.send

def drop_reply(stream, msg_or_type, *args, **kw):
    if msg_or_type == "execute_reply":
        k.session.send = send
        return {"content": {"status": "ok"}}
    return send(stream, msg_or_type, *args, **kw)

k.session.send = drop_reply
print("waiting")'''


@pytest.mark.slow
def test_a_cell_left_waiting_on_an_idle_kernel_is_named_and_stops_its_notebook(tmp_path, monkeypatch, capsys):
    """A cell whose reply is lost stops its notebook after STALL_S (here 3 s; the ci cell limit is 900 s), with one
    line naming the notebook, the cell and nbclient issue 312; the run exits 1 and leaves no partial output."""
    root, out = tmp_path / "repo", tmp_path / "out"
    tiny_book(root, LOST_REPLY)
    monkeypatch.setattr(client, "STALL_S", 3.0)
    t0 = time.time()
    assert book.run_book("ci", out_root=out, build=False, root=root) == 1
    assert time.time() - t0 < 60, "the stall was waited out"
    err = capsys.readouterr().err
    failed = [line for line in err.splitlines() if line.startswith("[FAILED]")]
    # cells: the parameters (index 0), the stalled cell (1); the ci profile sets no parameter, so none is injected
    assert failed == ["[FAILED]  notebooks/a.ipynb: cell [2] (index 1, `k = get_ipython().kernel`) stalled: its kernel "
                      "has been idle for 3 s, with no output, while the client still waits for the cell's reply "
                      "(nbclient issue 312, seen with widget cells); the notebook was stopped"], err
    assert not list(out.rglob("*.partial.ipynb")) and not list(out.rglob("a.ipynb"))


@pytest.mark.slow
def test_a_long_silent_cell_is_no_stall(tmp_path, monkeypatch, capsys):
    """A cell that runs for longer than STALL_S without a word is busy, not stalled (its kernel never said idle): the
    run succeeds."""
    root, out = tmp_path / "repo", tmp_path / "out"
    tiny_book(root, "import time\ntime.sleep(4)")
    monkeypatch.setattr(client, "STALL_S", 2.0)
    assert book.run_book("ci", out_root=out, build=False, root=root) == 0, capsys.readouterr().err


# An IPython start-up file that holds the kernel's last kernel_info handler open for a second after its reply (the
# window in which SIGINT is not yet ignored again), so that an interrupt at shutdown lands there every time, not in
# 1 run of 10 as on an unloaded machine.
SLOW_LAST_REPLY = '''import time
_k = get_ipython().kernel
_info = _k.shell_handlers["kernel_info_request"]


async def _slow_info(stream, ident, parent):
    await _info(stream, ident, parent)
    if get_ipython().execution_count > 1:     # after the cells: papermill's last request before the shutdown
        time.sleep(1.0)


_k.shell_handlers["kernel_info_request"] = _slow_info
'''


@pytest.mark.slow
def test_a_successful_ci_run_prints_no_kernel_error_line(tmp_path, monkeypatch, capfd):
    """A notebook that runs to its end, its kernel shut down while it still finishes its last reply: rc 0 and no
    ERROR line (the kernels share this process's stderr)."""
    root, out = tmp_path / "repo", tmp_path / "out"
    tiny_book(root, "print(x + 1)")
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-slow.py").write_text(SLOW_LAST_REPLY)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    assert book.run_book("ci", out_root=out, build=False, root=root) == 0
    err = capfd.readouterr().err
    assert "ERROR" not in err and "KeyboardInterrupt" not in err, err


# --- notebook 07's live cell, by what the kernel is asked ---

LIVE = """from IPython.display import display
from imbalanced_cl.book.plots import explorer as PX
from imbalanced_cl.claims.explorer import ExplorerConfig
display(PX.live(ExplorerConfig(steps=30, n_pairs=64, m=12)))"""


def _run_in_a_kernel(code: str, allow_stdin: bool) -> list[dict]:
    """The IOPub messages of one execute request (allow_stdin as sent), up to the kernel's idle status."""
    from jupyter_client.manager import start_new_kernel
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT),
                              env={**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    try:
        msg_id = kc.execute(code, allow_stdin=allow_stdin)
        msgs, deadline = [], time.time() + 180
        while time.time() < deadline:
            msg = kc.get_iopub_msg(timeout=deadline - time.time())
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            msgs.append(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return msgs
        raise AssertionError("the cell did not finish")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.mark.slow
@pytest.mark.parametrize("front_end", [True, False], ids=["front-end", "headless"])
def test_the_explorer_is_a_widget_for_a_front_end_and_a_figure_without_one(front_end):
    """Sent by a front end (allow_stdin true), the live cell displays the sliders' widget; sent by nbclient
    (allow_stdin false), it displays a PNG figure and opens no comm that nothing would answer."""
    msgs = _run_in_a_kernel(LIVE, allow_stdin=front_end)
    errors = [m["content"] for m in msgs if m["msg_type"] == "error"]
    assert not errors, errors
    shown = [set(m["content"]["data"]) for m in msgs if m["msg_type"] == "display_data"]
    comms = [m for m in msgs if m["msg_type"].startswith("comm_")]
    widget = "application/vnd.jupyter.widget-view+json"
    if front_end:
        assert any(widget in d for d in shown) and comms, shown
    else:
        assert shown and all("image/png" in d and widget not in d for d in shown) and not comms, (shown, comms)


def test_outside_a_kernel_there_is_no_front_end():
    """Plain Python (this test process) has no front end to show a widget."""
    from imbalanced_cl.book.plots import explorer as PX
    assert PX.front_end() is False
