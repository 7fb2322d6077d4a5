// Accessibility repairs found by axe-core: the book theme's header buttons (label-content-name-mismatch), its
// sidebar (region), and table headers that hold only a formula (empty-table-header).
(function () {
  function repair() {
    // The search field shows "Search Ctrl+K" but is named "Search": let its visible text be its name.
    document.querySelectorAll("button.search-button-field[aria-label]").forEach(function (b) {
      b.removeAttribute("aria-label");
    });
    // The colour-mode button is named "Color mode"; its three icons are decoration, not text.
    document.querySelectorAll(".theme-switch-button i, .theme-switch-button svg").forEach(function (icon) {
      icon.removeAttribute("title");
      icon.setAttribute("aria-hidden", "true");
      icon.removeAttribute("role");
      icon.removeAttribute("aria-labelledby");
      icon.querySelectorAll("title").forEach(function (t) { t.remove(); });
    });
    // The left sidebar (book title, search, chapters) sits outside every landmark (axe-core: region).
    document.querySelectorAll(".bd-sidebar-primary:not([role])").forEach(function (bar) {
      bar.setAttribute("role", "navigation");
      bar.setAttribute("aria-label", "Book");
    });
  }
  // A formula as plain text: ϵ_min/ϵ_max, Pr[A_i], x^(k+1), (a+b)/2; other MathML elements read as their text.
  function linear(node) {
    var parts = Array.prototype.map.call(node.children, linear);
    function group(t) { return Array.from(t).length < 2 || /^[\p{L}\p{N}]*$/u.test(t) ? t : "(" + t + ")"; }
    switch (node.localName) {
      case "msub": return parts[0] + "_" + group(parts[1]);
      case "msup": return parts[0] + "^" + group(parts[1]);
      case "msubsup": return parts[0] + "_" + group(parts[1]) + "^" + group(parts[2]);
      case "mfrac": return group(parts[0]) + "/" + group(parts[1]);
      case "msqrt": return "√" + group(parts.join(""));
      default: return node.children.length ? parts.join("") : node.textContent.trim();
    }
  }
  // A header cell is named by its text; MathJax's MathML is embedded content, which axe-core (and some readers)
  // cannot name it by. Label each formula in a header cell with its plain-text reading.
  function labelHeaderMath() {
    document.querySelectorAll("th mjx-assistive-mml > math:not([aria-label])").forEach(function (m) {
      m.setAttribute("aria-label", linear(m));
    });
  }
  // Run after MathJax's first typeset: as its pageReady step when MathJax has not started yet (this script is
  // deferred ahead of it), else once its startup promise settles.
  var mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(function () { labelHeaderMath(); fitTables(); });
  } else if (mj && !mj.version) {
    mj.startup = Object.assign({}, mj.startup, {
      pageReady: function () {
        return MathJax.startup.defaultPageReady().then(function () { labelHeaderMath(); fitTables(); });
      },
    });
  }
  // A table wider than its column stacks into cards (imbalanced-cl.css, class ic-stack): each body cell is labelled
  // with its column's header text, so a reader on a phone sees every value, the verdict included, under its name.
  function labelCells(table) {
    var head = table.tHead && table.tHead.rows.length ? table.tHead.rows[table.tHead.rows.length - 1] : null;
    if (!head) { return false; }
    var names = Array.prototype.map.call(head.cells, function (c) { return c.textContent.trim(); });
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (row) {
        Array.prototype.forEach.call(row.cells, function (cell, i) {
          if (!cell.hasAttribute("data-label") && names[i]) { cell.setAttribute("data-label", names[i]); }
        });
      });
    });
    return true;
  }
  function fitTables() {
    document.querySelectorAll("article table").forEach(function (table) {
      if (!labelCells(table)) { return; }
      table.classList.remove("ic-stack");
      var room = table.parentElement.clientWidth;
      if (table.getBoundingClientRect().width > room + 1 || table.parentElement.scrollWidth > room + 1) {
        table.classList.add("ic-stack");
      }
    });
  }
  var fitTimer = null;
  window.addEventListener("resize", function () { clearTimeout(fitTimer); fitTimer = setTimeout(fitTables, 100); });
  document.addEventListener("toggle", fitTables, true);   // a folded table (scoreboard rows) is measured when opened
  function start() { repair(); fitTables(); }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
  window.addEventListener("load", repair);  // again after Font Awesome has turned the icons into SVG
})();
