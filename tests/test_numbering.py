"""One claim numbering everywhere: the sidebar (_toc.yml titles), each claim notebook's page title (its first
heading) and the answer table all take a claim's number from one table in code, answers.CLAIMS."""
from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from imbalanced_cl.book.pages import answers

ROOT = Path(__file__).resolve().parents[1]


def _toc_titles() -> dict[str, str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return {Path(ch["file"]).name: ch.get("title", "") for part in toc["parts"] for ch in part["chapters"]}


def _h1(notebook: str) -> str:
    nb = json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text())
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    return "".join(first["source"]).splitlines()[0].removeprefix("# ")


def _numbers(title: str) -> list[str]:
    """The claim numbers a title names: 'Claim 4 · ...' -> ['4'], 'Claims 1-4 along d' -> ['1', '2', '3', '4']."""
    m = re.match(r"Claims? ([0-9A-Z.]+)(?:-([0-9]+))? ", title)
    if not m:
        return []
    if m.group(2):
        return [str(k) for k in range(int(m.group(1)), int(m.group(2)) + 1)]
    return [m.group(1)]


def test_numbers_parse_as_a_reader_reads_them():
    assert _numbers("Claim A.2 · The figures") == ["A.2"]
    assert _numbers("Claims 1-4 along d · gap") == ["1", "2", "3", "4"]
    assert _numbers("Explorer of the training dynamics") == []


def test_sidebar_and_page_titles_use_the_answer_tables_numbers():
    """Each claim's main notebook is titled "Claim KEY · ..." in the sidebar and on its page, and no title names a
    claim number that the answer table does not have, or a notebook under another claim's number."""
    titles, keys = _toc_titles(), {c.key for c in answers.CLAIMS}
    owner = {nb: c.key for c in answers.CLAIMS for nb in c.notebooks}
    for c in answers.CLAIMS:
        main = c.notebooks[0]
        assert titles[main].startswith(f"Claim {c.key} · "), (main, titles[main], c.key)
        assert _h1(main).startswith(f"Claim {c.key} · "), (main, _h1(main), c.key)
    for nb, title in titles.items():
        nums = _numbers(title)
        assert set(nums) <= keys, (nb, title)
        if nb in owner and len(nums) == 1:
            assert nums == [owner[nb]], (nb, title, owner[nb])
