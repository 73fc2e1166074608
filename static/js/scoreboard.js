// Live scoreboard: the challenge boards of this workspace push their standings over
// websockets; when one moves, htmx re-renders the scoreboard fragment (standings and
// graph, drawn on the server). Polling in the fragment remains the fallback.
(function () {
  "use strict";
  var MAX_SOCKETS = 25;
  var board = document.getElementById("scoreboard");
  if (!board || !window.WebSocket || !window.liveSocket) return;
  var paths = (board.getAttribute("data-live") || "").split(" ").filter(Boolean).slice(0, MAX_SOCKETS);
  var pending = null;

  function refreshSoon() {
    if (pending) return;
    pending = setTimeout(function () {
      pending = null;
      var current = document.getElementById("scoreboard");
      if (current && window.htmx) window.htmx.trigger(current, "refresh");
    }, 300);
  }

  paths.forEach(function (path) {
    window.liveSocket(path, {
      frame: function (frame, connection) {
        // A socket's first frame: the page already shows these standings.
        if (!connection.seen) { connection.seen = true; return; }
        refreshSoon();
      }
    });
  });
})();
