// Live collection board: when the server pushes new standings over the websocket, fetch
// this page again and swap in its leaderboard section, so the rows keep the server's
// formatting and the player's own row stays marked. Without websockets the page is static.
(function () {
  "use strict";
  var board = document.getElementById("collection-leaderboard");
  if (!board || !window.WebSocket || !window.fetch || !window.DOMParser) return;
  var path = board.getAttribute("data-live");
  if (!path) return;
  var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  var delay = 1000;
  var refreshing = false;
  var again = false;

  function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { "X-Live-Refresh": "1" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (!html) return;
        var fresh = new DOMParser().parseFromString(html, "text/html")
          .getElementById("collection-leaderboard");
        var current = document.getElementById("collection-leaderboard");
        if (fresh && current) current.innerHTML = fresh.innerHTML;
      })
      .catch(function () {})
      .then(function () {
        refreshing = false;
        if (again) { again = false; refresh(); }
      });
  }

  function connect() {
    var socket = new WebSocket(scheme + window.location.host + path);
    var first = true;
    socket.onmessage = function () {
      delay = 1000;
      if (first) { first = false; return; }  // the page already shows these standings
      refresh();
    };
    socket.onclose = function (event) {
      if (event.code === 4404) return;
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  connect();
})();
