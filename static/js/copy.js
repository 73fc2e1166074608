// Copy buttons: <button class="copy-button" data-copy-target="element-id">. One delegated
// listener, so rows swapped in by htmx get it too; no inline handlers (the CSP forbids them).
(function () {
  "use strict";

  function copied(button, label) {
    var original = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", original);
    button.textContent = label;
    window.setTimeout(function () { button.textContent = original; }, 1500);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".copy-button") : null;
    if (!button) { return; }
    var source = document.getElementById(button.getAttribute("data-copy-target"));
    if (!source) { return; }
    var text = source.textContent;
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(
        function () { copied(button, "Copied"); },
        function () { copied(button, "Copy failed"); }
      );
    } else {
      copied(button, "Copy failed");
    }
  });
})();
