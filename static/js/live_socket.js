// A live page's websocket, one policy for every board: frames are parsed as JSON and
// handed to `handlers.frame(frame, connection)` (`connection` is the caller's state for
// this one socket, e.g. the last version seen); a dropped socket is reopened after 1 s,
// doubling up to 30 s and back to 1 s once a frame arrives, with `handlers.lost()` called
// first; a close with code 4404 (no such board) is final. Load it before its users.
(function () {
  "use strict";
  window.liveSocket = function (path, handlers) {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var delay = 1000;
    function lost() { if (handlers.lost) handlers.lost(); }
    function connect() {
      var socket;
      try { socket = new WebSocket(scheme + window.location.host + path); }
      catch (error) { lost(); return; }
      var connection = {};
      socket.onmessage = function (event) {
        delay = 1000;
        var frame;
        try { frame = JSON.parse(event.data); } catch (error) { return; }
        handlers.frame(frame, connection);
      };
      socket.onclose = function (event) {
        if (event.code === 4404) return;
        lost();
        setTimeout(connect, delay);
        delay = Math.min(delay * 2, 30000);
      };
    }
    connect();
  };
})();
