// Live leaderboard: when the server pushes new standings over the websocket, ask htmx to
// reload the leaderboard fragment (it knows which row is the player's). Polling in the
// fragment remains the fallback when websockets are unavailable.
(function () {
  "use strict";
  var board = document.getElementById("leaderboard");
  if (!board || !window.WebSocket) return;
  var path = board.getAttribute("data-live");
  if (!path) return;
  var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  var delay = 1000;

  function connect() {
    var socket = new WebSocket(scheme + window.location.host + path);
    var first = true;
    socket.onmessage = function () {
      delay = 1000;
      if (first) { first = false; return; }  // the page already shows the current standings
      var current = document.getElementById("leaderboard");
      if (current && window.htmx) window.htmx.trigger(current, "refresh");
    };
    socket.onclose = function (event) {
      if (event.code === 4404) return;
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  connect();
})();
