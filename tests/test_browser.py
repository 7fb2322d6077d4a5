"""The built book in a real browser: every page loads in headless Chromium with its title, its figures, a
filled scoreboard and no broken internal link. Screenshots land in <out>/_build/screenshots.

Uses the session's ci-profile build (tests/conftest.py::ci_book). Debian's chromium and chromium-driver
are installed by the set-up when missing (CI runs as root); the test skips, saying why, only if that fails.
"""
from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import threading
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import nbformat
import pytest

from imbalanced_cl.book import scoreboard

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1280,1600"]


def _binaries() -> tuple[str | None, str | None]:
    return (shutil.which("chromium") or shutil.which("chromium-browser"),
            shutil.which("chromedriver") or ("/usr/lib/chromium/chromedriver"
                                             if Path("/usr/lib/chromium/chromedriver").exists() else None))


def ensure_chromium() -> tuple[str, str]:
    """Paths of chromium and chromedriver, installing Debian's packages if they are missing."""
    browser, driver = _binaries()
    if browser and driver:
        return browser, driver
    if shutil.which("apt-get") is None:
        pytest.skip("chromium is missing and apt-get is not available to install it")
    env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium", "chromium-driver"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        if proc.returncode != 0:
            pytest.skip(f"could not install chromium ({' '.join(cmd)} failed): {proc.stderr.strip()[-500:]}")
    browser, driver = _binaries()
    if not (browser and driver):
        pytest.skip("chromium or chromedriver still missing after apt-get install")
    return browser, driver


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="module")
def site(ci_book):
    """The ci book's _build/html served on 127.0.0.1 (a free port) for the duration of the module."""
    out, log, rc = ci_book
    assert rc == 0, f"the ci book did not build:\n{log[-4000:]}"
    html = out / "_build" / "html"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_Quiet, directory=str(html)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield out, html, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """A headless Chromium driven by selenium, with a fresh profile."""
    chromium, chromedriver = ensure_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        opts.add_argument(flag)
    try:
        drv = webdriver.Chrome(service=Service(executable_path=chromedriver), options=opts)
    except Exception as e:  # a broken browser install is an environment problem, reported plainly
        pytest.skip(f"headless chromium did not start: {type(e).__name__}: {str(e)[:300]}")
    drv.set_page_load_timeout(60)
    yield drv
    drv.quit()


def pages(html: Path) -> list[Path]:
    """Every content page of the book (Sphinx's search/genindex pages excluded)."""
    skip = {"search.html", "genindex.html", "py-modindex.html"}
    return sorted(p for p in html.rglob("*.html") if p.name not in skip and "_static" not in p.parts
                  and "_sources" not in p.parts)


_CHECK_JS = """
const imgs = Array.from(document.querySelectorAll('article img, main img, .bd-article img'));
return {
  title: document.title,
  h1: (document.querySelector('h1') || {}).textContent || '',
  images: imgs.map(i => ({src: i.currentSrc || i.src, complete: i.complete, w: i.naturalWidth})),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  scoreRows: Array.from(document.querySelectorAll('table.scoreboard tbody tr[data-notebook]'))
                 .map(r => r.getAttribute('data-notebook')),
};
"""


def test_every_page_renders_in_chromium(site, browser):
    """Title, loaded figures and working internal links on every page; screenshots saved."""
    out, html, base = site
    shots = out / "_build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    all_pages = pages(html)
    assert (html / "index.html").exists() and len(all_pages) >= 3
    problems, seen_links = [], set()
    for page in all_pages:
        rel = page.relative_to(html).as_posix()
        browser.get(base + rel)
        browser.execute_script("return document.readyState")
        info = browser.execute_script(_CHECK_JS)
        name = rel.replace("/", "__").removesuffix(".html")
        browser.save_screenshot(str(shots / f"{name}.png"))
        if not info["title"].strip() or not info["h1"].strip():
            problems.append(f"{rel}: no title or no h1")
        for img in info["images"]:
            if not img["complete"] or img["w"] == 0:
                problems.append(f"{rel}: image not loaded: {img['src']}")
        for href in info["links"]:
            url, _ = urldefrag(href)
            if url.startswith(base):
                seen_links.add((rel, url))
    for rel, url in sorted(seen_links):
        target = html / unquote(urlparse(url).path).lstrip("/")
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            problems.append(f"{rel}: broken internal link {url}")
    assert not problems, "\n".join(problems)
    assert len(list(shots.glob("*.png"))) == len(all_pages)


def test_notebook_pages_show_figures(site, browser):
    """Every notebook page whose executed copy has an image output shows at least one loaded image."""
    out, html, base = site
    executed = out / "_build" / "executed"
    missing = []
    for nb_path in sorted(executed.rglob("*.ipynb")):
        if nb_path.name.startswith("."):
            continue
        nb = nbformat.read(nb_path, as_version=4)
        n_img = sum(1 for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
        if not n_img:
            continue
        rel = nb_path.relative_to(executed).with_suffix(".html").as_posix()
        browser.get(base + rel)
        loaded = browser.execute_script(
            "return Array.from(document.images).filter(i => i.complete && i.naturalWidth > 0).length")
        if loaded == 0:
            missing.append(f"{rel}: {n_img} image outputs in the notebook, none loaded on the page")
    assert not missing, "\n".join(missing)


def test_scoreboard_is_reachable_and_filled(site, browser):
    """The scoreboard is one click from index.html and has >= 1 row per claim notebook that recorded verdicts."""
    out, html, base = site
    browser.get(base + "index.html")
    links = browser.execute_script(_CHECK_JS)["links"]
    board_url = urljoin(base, "book/scoreboard.html")
    assert any(urldefrag(h)[0] == board_url for h in links), "no link to the scoreboard on index.html"
    browser.get(board_url)
    info = browser.execute_script(_CHECK_JS)
    board = scoreboard.gather(str(out / "_build" / "executed" / "notebooks"), ROOT)
    with_verdicts = {r["notebook"] for r in board.rows}
    assert with_verdicts, f"no claim notebook recorded verdicts: {board.status}"
    shown = set(info["scoreRows"])
    assert with_verdicts <= shown, f"scoreboard rows missing for {with_verdicts - shown}"
    assert info["scoreRows"].count(next(iter(with_verdicts))) >= 1
    text = browser.execute_script("return document.body.innerText")
    for nb, why in board.missing.items():
        assert nb in text, f"the scoreboard does not say that {nb}'s verdicts are missing ({why})"
    (out / "_build" / "screenshots").mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(out / "_build" / "screenshots" / "scoreboard-check.png"))
    json.dumps(info)  # the page data are plain JSON (no stale element references)
