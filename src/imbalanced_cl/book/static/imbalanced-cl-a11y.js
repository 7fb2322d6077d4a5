// Accessibility repairs for the book theme's header buttons (found by axe-core, rule label-content-name-mismatch).
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
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", repair);
  } else {
    repair();
  }
  window.addEventListener("load", repair);  // again after Font Awesome has turned the icons into SVG
})();
