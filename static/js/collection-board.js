// Live collection board: every frame the server pushes carries the board's rows as HTML,
// the same for every viewer; this script swaps them in and marks the player's own row, so
// a push costs no request. Without websockets the page is static.
(function () {
  "use strict";
  var board = document.getElementById("collection-leaderboard");
  if (!board || !window.WebSocket || !window.liveSocket) return;
  var path = board.getAttribute("data-live");
  if (!path) return;

  function apply(frame) {
    var section = document.getElementById("collection-leaderboard");
    var rows = section && section.querySelector("[data-board-rows]");
    if (!rows || typeof frame.html !== "string") return;
    rows.innerHTML = frame.html;
    var own = section.getAttribute("data-own-end-user") || "";
    if (!own) return;
    var items = rows.querySelectorAll("[data-end-user]");
    for (var i = 0; i < items.length; i++) {
      if (items[i].getAttribute("data-end-user") !== own) continue;
      // The player cell (data-end-user) gets the marks the page renders for its own row.
      var row = items[i].closest(".board-row");
      if (row) row.classList.add("me");
      var you = document.createElement("em");
      you.textContent = "(you)";
      items[i].appendChild(document.createTextNode(" "));
      items[i].appendChild(you);
    }
  }

  window.liveSocket(path, { frame: apply });
})();
