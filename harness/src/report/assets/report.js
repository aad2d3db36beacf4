// Filters scenarios by verdict and text, and opens the section holding a linked frame.
// Reads only the page's own text; never evaluates anything from it.
(function () {
  "use strict";
  var search = document.getElementById("search");
  var boxes = Array.prototype.slice.call(document.querySelectorAll("input[data-verdict]"));
  var sections = Array.prototype.slice.call(document.querySelectorAll("details.scenario"));
  var shown = document.getElementById("shown");
  var texts = null;
  function apply() {
    var q = search.value.trim().toLowerCase();
    if (q && texts === null) {
      texts = sections.map(function (s) { return s.textContent.toLowerCase(); });
    }
    var on = {};
    boxes.forEach(function (b) { on[b.getAttribute("data-verdict")] = b.checked; });
    var n = 0;
    sections.forEach(function (s, i) {
      var ok = on[s.getAttribute("data-verdict")] !== false && (!q || texts[i].indexOf(q) >= 0);
      s.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = String(n);
  }
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    for (var e = target; e; e = e.parentElement) {
      if (e.tagName === "DETAILS") { e.open = true; }
    }
    if (target) { target.scrollIntoView(); }
  }
  search.addEventListener("input", apply);
  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  window.addEventListener("hashchange", reveal);
  apply();
  reveal();
  document.documentElement.setAttribute("data-report-script", "ran");
})();
