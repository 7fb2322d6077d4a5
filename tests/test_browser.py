"""The built book in a real browser, offline: every page loads in headless Chromium with its title, its figures,
a filled scoreboard, no broken internal link, no console error, typeset math and no accessibility violation of
any impact (axe-core, on every HTML page). Screenshots land in <out>/_build/screenshots.

The browser runs with every host but 127.0.0.1 unresolvable, so a page that needs the network (a CDN script,
a web font) fails here. Uses the session's ci-profile build (tests/conftest.py::ci_book). Debian's chromium
and chromium-driver are installed by the set-up when missing (CI runs as root); the test skips, saying why,
only if that fails. axe-core is vendored in tests/vendor/ (see its README).
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

from imbalanced_cl.book.pages import scoreboard

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1280,1600",
                  # the network, blocked: every host name but the local server's fails to resolve
                  "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]
AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"


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
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # console messages, read by console_errors()
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
    for page in all_pages:
        assert (shots / (page.relative_to(html).as_posix().replace("/", "__").removesuffix(".html") + ".png")).exists()


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
    with_verdicts = {r.notebook for r in board.rows}
    assert with_verdicts, f"no claim notebook recorded verdicts: {board.status}"
    shown = set(info["scoreRows"])
    assert with_verdicts <= shown, f"scoreboard rows missing for {with_verdicts - shown}"
    assert info["scoreRows"].count(next(iter(with_verdicts))) >= 1
    text = browser.execute_script("return document.body.innerText")
    for nb, why in board.missing.items():
        assert nb in text, f"the scoreboard does not say that {nb}'s verdicts are missing ({why})"
    # It says what built it, opens on one summary line per claim notebook, and folds the rows away.
    assert "Built at the ci profile from commit" in text, text[:2000]
    summary = browser.execute_script(
        "return Array.from(document.querySelectorAll('tr[data-summary]')).map(r => r.getAttribute('data-summary'))")
    assert summary == list(board.status), (summary, list(board.status))
    folded = browser.execute_script(
        "return Array.from(document.querySelectorAll('details.sb-rows')).map(d => d.open)")
    assert folded and not any(folded), "the rows should start folded"
    height = browser.execute_script("return document.body.scrollHeight")
    assert height < 5000, f"the scoreboard is {height} px tall at 1280 px wide; it should open on a summary"
    (out / "_build" / "screenshots").mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(out / "_build" / "screenshots" / "scoreboard-check.png"))
    json.dumps(info)  # the page data are plain JSON (no stale element references)


def console_errors(browser) -> list[str]:
    """Console messages of level SEVERE (errors) logged since the last call."""
    return [e["message"] for e in browser.get_log("browser") if e.get("level") == "SEVERE"]


def notebook_pages(html: Path) -> list[Path]:
    """The pages built from notebooks under notebooks/."""
    return sorted((html / "notebooks").glob("*.html"))


def test_no_console_errors_offline(site, browser):
    """No page logs an error, with the network blocked: no CDN script, no duplicate declaration, no 404."""
    out, html, base = site
    console_errors(browser)  # drop what earlier tests left
    problems = []
    for page in pages(html):
        rel = page.relative_to(html).as_posix()
        browser.get(base + rel)
        browser.execute_script("return document.readyState")
        problems += [f"{rel}: {msg}" for msg in console_errors(browser)]
    assert not problems, "\n".join(problems)


_MATH_JS = """
const done = arguments[arguments.length - 1];
const report = () => done({
  typeset: document.querySelectorAll('mjx-container').length,
  spans: document.querySelectorAll('span.math, div.math').length,
  raw: Array.from(document.querySelectorAll('span.math, div.math'))
            .filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 60)),
  src: Array.from(document.scripts).map(s => s.src).filter(s => s.includes('mathjax')),
});
if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
  MathJax.startup.promise.then(report, report);
} else { setTimeout(report, 3000); }
"""


def test_math_is_typeset_offline(site, browser):
    """A formula on a notebook page is typeset by MathJax served from the book itself (no network)."""
    out, html, base = site
    with_math = [p for p in notebook_pages(html) if 'class="math' in p.read_text()]
    assert with_math, "no notebook page has a formula to check"
    browser.set_script_timeout(60)
    for page in with_math:
        rel = page.relative_to(html).as_posix()
        browser.get(base + rel)
        info = browser.execute_async_script(_MATH_JS)
        assert info["src"] and all(s.startswith(base) for s in info["src"]), f"{rel}: MathJax from {info['src']}"
        assert info["typeset"] >= info["spans"] > 0, f"{rel}: untypeset formulas {info['raw'][:5]}"


def html_files(html: Path) -> list[Path]:
    """Every HTML page of the built book, Sphinx's search and index pages included (not _static, _sources)."""
    return sorted(p for p in html.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)


_TYPESET_JS = """
const done = arguments[arguments.length - 1];
if (window.MathJax && MathJax.startup && MathJax.startup.promise) { MathJax.startup.promise.then(done, done); }
else { done(); }
"""


def _axe(browser) -> list[dict]:
    """Run the vendored axe-core on the current page, once MathJax has typeset it; violations as {id, impact, nodes}."""
    browser.set_script_timeout(120)
    browser.execute_async_script(_TYPESET_JS)
    browser.execute_script(AXE.read_text())
    return browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations.map(v => ("
        "{id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.html.slice(0, 160))}))),"
        " e => done([{id: 'axe-error', impact: 'critical', nodes: [String(e)]}]));")


def test_no_accessibility_violations_on_any_page(site, browser):
    """axe-core finds no violation, of any impact (minor included), on any HTML page of the book."""
    out, html, base = site
    targets = [p.relative_to(html).as_posix() for p in html_files(html)]
    assert {"index.html", "book/references.html", "book/scoreboard.html", "search.html"} <= set(targets)
    problems = []
    for rel in targets:
        browser.get(base + rel)
        browser.execute_script("return document.readyState")
        problems += [f"{rel}: {v['id']} ({v['impact']}): {v['nodes']}" for v in _axe(browser)]
    assert not problems, "\n".join(problems)


_TEX = ("\\(", "\\)", "\\[", "$", "\\mathcal", "\\epsilon")


def test_titles_and_navigation_are_plain_text(site, browser):
    """Browser-tab titles, page headings and navigation labels carry no raw TeX."""
    out, html, base = site
    problems = []
    for page in pages(html):
        rel = page.relative_to(html).as_posix()
        browser.get(base + rel)
        info = browser.execute_script(
            "return {title: document.title,"
            " nav: Array.from(document.querySelectorAll('.bd-sidebar-primary nav a')).map(a => a.textContent.trim())};")
        for text in [info["title"], *info["nav"]]:
            if any(t in text for t in _TEX):
                problems.append(f"{rel}: {text!r}")
    assert not problems, "raw TeX in a title or navigation label:\n" + "\n".join(sorted(set(problems)))


def test_figures_have_alt_text(site, browser):
    """Every figure in a page's article has alt text that says what it shows (not its file name)."""
    out, html, base = site
    problems = []
    for page in pages(html):
        rel = page.relative_to(html).as_posix()
        browser.get(base + rel)
        alts = browser.execute_script(
            "return Array.from(document.querySelectorAll('article.bd-article img'))"
            ".map(i => i.getAttribute('alt') || '');")
        for alt in alts:
            if len(alt.split()) < 3 or "_images/" in alt or alt.lower().endswith((".png", ".svg", ".jpg", ".jpeg")):
                problems.append(f"{rel}: alt={alt!r}")
    assert not problems, ("figures without descriptive alt text (set it in the cell's metadata, "
                          '"mystnb": {"image": {"alt": "..."}}):\n' + "\n".join(problems))


_LAYOUT_JS = """
const vw = document.documentElement.clientWidth;
const art = document.querySelector('article.bd-article');
const edge = art ? art.getBoundingClientRect().right : vw;
const name = el => el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined
  ? '.' + String(el.className).trim().split(/\\s+/).slice(0, 2).join('.') : '');
const over = [];
// Result blocks: every cell output (printed text, tables, figures) and every table of the article, and the scroll
// containers the theme and the scoreboard put around tables. Code (cell inputs, command examples) may scroll.
const blocks = document.querySelectorAll(
  'article div.cell_output, article div.cell_output pre, article div.cell_output img, article table, ' +
  'article .pst-scrollable-table-container, article .sb-scroll, article figure img');
for (const el of blocks) {
  if (el.closest('.cell_input, div.highlight')) continue;
  const r = el.getBoundingClientRect();
  if (r.width === 0) continue;
  if (el.scrollWidth > el.clientWidth + 1 || r.right > Math.min(edge, vw) + 1) {
    over.push(name(el) + ' (' + el.scrollWidth + ' px wide in ' + el.clientWidth + ', right edge ' + Math.round(r.right)
              + ' of ' + Math.round(Math.min(edge, vw)) + '): ' + (el.innerText || el.getAttribute('alt') || '').slice(0, 80));
  }
}
// The verdict column: in every table with a "verdict" header, the first body row's verdict cell is on screen.
const hidden = [];
for (const t of document.querySelectorAll('article table')) {
  const head = t.tHead && t.tHead.rows.length ? t.tHead.rows[t.tHead.rows.length - 1] : null;
  if (!head) continue;
  const i = Array.from(head.cells).findIndex(c => c.textContent.trim().toLowerCase().startsWith('verdict'));
  const row = t.tBodies.length ? t.tBodies[0].rows[0] : null;
  if (i < 0 || !row || !row.cells[i]) continue;
  if (t.closest('details:not([open])')) continue;     // folded rows are not on screen at all
  const r = row.cells[i].getBoundingClientRect();
  if (r.width < 1 || r.left < -1 || r.right > vw + 1) {
    hidden.push(name(t) + ': verdict cell at ' + Math.round(r.left) + '-' + Math.round(r.right) + ' of ' + vw);
  }
}
return {over: over, hidden: hidden, vw: vw};
"""  # noqa: E501 (a line of the JavaScript above: breaking it would change the string)


@pytest.mark.parametrize("width", [1280, 390])
def test_nothing_a_reader_must_read_is_clipped(site, browser, width):
    """At 1280 px (a laptop) and 390 px (a phone), no result block (cell output, table, figure) on any page is wider
    than its column or scrolls sideways, and the verdict column of every verdict table is on screen."""
    out, html, base = site
    shots = out / "_build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    browser.set_window_size(width, 1000)
    problems = []
    try:
        for page in pages(html):
            rel = page.relative_to(html).as_posix()
            browser.get(base + rel)
            browser.execute_async_script(_TYPESET_JS)
            info = browser.execute_script(_LAYOUT_JS)
            problems += [f"{rel} at {width} px: overflows: {o}" for o in info["over"]]
            problems += [f"{rel} at {width} px: verdict hidden: {h}" for h in info["hidden"]]
            if rel in ("book/intro.html", "book/scoreboard.html"):
                browser.save_screenshot(str(shots / f"{rel.replace('/', '__').removesuffix('.html')}-{width}.png"))
    finally:
        browser.set_window_size(1280, 1600)
    assert not problems, f"{len(problems)} clipped blocks:\n" + "\n".join(problems[:60])
