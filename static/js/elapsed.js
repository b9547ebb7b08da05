// Live timers on the run page: every element with data-elapsed-s (whole seconds elapsed when the server
// rendered it) keeps counting between the page's polls. The server's own text stays where this script
// does not run; each poll swaps in fresh elements with fresh values, so clocks never drift apart.
(function () {
  "use strict";
  var seen = new WeakMap();

  function pad(n) { return n < 10 ? "0" + n : String(n); }

  function clock(total) {  // the same words as the "clock" template filter
    if (total < 60) { return total + " s"; }
    if (total < 3600) { return Math.floor(total / 60) + " min " + pad(total % 60) + " s"; }
    return Math.floor(total / 3600) + " h " + pad(Math.floor(total % 3600 / 60)) + " min";
  }

  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-elapsed-s]").forEach(function (el) {
      var start = parseInt(el.getAttribute("data-elapsed-s"), 10);
      if (isNaN(start)) { return; }
      if (!seen.has(el)) { seen.set(el, now); }
      el.textContent = clock(start + Math.floor((now - seen.get(el)) / 1000));
    });
  }

  setInterval(tick, 1000);
}());
