// Live leaderboard: every frame the server pushes carries the board's rows as HTML, the
// same for every viewer; this script swaps them in and marks the player's own row, so a
// push costs no request. Frames carry a version: one that arrives after a newer one is
// dropped. Polling in the fragment remains the fallback when websockets are unavailable.
(function () {
  "use strict";
  var board = document.getElementById("leaderboard");
  if (!board || !window.WebSocket || !window.liveSocket) return;
  var path = board.getAttribute("data-live");
  if (!path) return;

  function ownRow(rows, own) {
    var items = rows.querySelectorAll("[data-end-user]");
    for (var i = 0; i < items.length; i++) {
      if (items[i].getAttribute("data-end-user") === own) return items[i];
    }
    return null;
  }

  // `name` is the row's player cell (data-end-user); the page renders the same marks.
  function markOwn(name) {
    var row = name.closest(".board-row");
    if (row) row.classList.add("me");
    var you = document.createElement("em");
    you.textContent = "(you)";
    name.appendChild(document.createTextNode(" "));
    name.appendChild(you);
  }

  function showOwnRank(section, rank) {
    var line = section.querySelector(".own-rank");
    if (!line) {
      line = document.createElement("p");
      line.className = "own-rank";
      var heading = section.querySelector("h2");
      section.insertBefore(line, heading ? heading.nextSibling : section.firstChild);
    }
    line.textContent = "Your rank: ";
    var strong = document.createElement("strong");
    strong.textContent = "#" + rank;
    line.appendChild(strong);
  }

  function apply(frame) {
    var section = document.getElementById("leaderboard");
    var rows = section && section.querySelector("[data-board-rows]");
    if (!rows || typeof frame.html !== "string") return;
    var own = section.getAttribute("data-own-end-user") || "";
    var wasShown = own && ownRow(rows, own);
    rows.innerHTML = frame.html;
    if (!own) return;
    var mine = ownRow(rows, own);
    if (mine) {
      markOwn(mine);
      (frame.entries || []).forEach(function (entry) {
        if (entry.end_user_id === own) showOwnRank(section, entry.rank);
      });
    } else if (wasShown && window.htmx) {
      // Pushed off the shown rows: only the server knows this player's rank now.
      window.htmx.trigger(section, "refresh");
    }
  }

  window.liveSocket(path, {
    frame: function (frame, connection) {
      if (typeof frame.version === "number") {
        if (frame.version < (connection.version === undefined ? -1 : connection.version)) return;
        connection.version = frame.version;
      }
      apply(frame);
    }
  });
})();
