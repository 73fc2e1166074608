// Live scoreboard: the challenge boards of this workspace push their standings over
// websockets; when one moves, htmx re-renders the scoreboard fragment (standings and
// graph, drawn on the server). Polling in the fragment remains the fallback.
(function () {
  "use strict";
  var MAX_SOCKETS = 25;
  var board = document.getElementById("scoreboard");
  if (!board || !window.WebSocket) return;
  var paths = (board.getAttribute("data-live") || "").split(" ").filter(Boolean).slice(0, MAX_SOCKETS);
  var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  var pending = null;

  function refreshSoon() {
    if (pending) return;
    pending = setTimeout(function () {
      pending = null;
      var current = document.getElementById("scoreboard");
      if (current && window.htmx) window.htmx.trigger(current, "refresh");
    }, 300);
  }

  function connect(path, delay) {
    var socket = new WebSocket(scheme + window.location.host + path);
    var first = true;
    socket.onmessage = function () {
      delay = 1000;
      if (first) { first = false; return; }  // the page already shows these standings
      refreshSoon();
    };
    socket.onclose = function (event) {
      if (event.code === 4404) return;
      setTimeout(function () { connect(path, Math.min(delay * 2, 30000)); }, delay);
    };
  }
  paths.forEach(function (path) { connect(path, 1000); });
})();
