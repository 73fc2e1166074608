// Live transcript of an arena session: the socket sends new messages (already redacted for
// this viewer) and the session state; nothing is fetched again.
(function () {
  const list = document.getElementById("arena-transcript");
  if (!list) return;
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const seen = new Set();

  function render(message) {
    const key = message.channel + "#" + message.index;
    if (seen.has(key)) return;
    seen.add(key);
    const item = document.createElement("li");
    item.className = "arena-message " + (message.channel.startsWith("challenge_") ? "operator" : "chat");
    if (message.redacted) item.classList.add("redacted");
    const from = document.createElement("span");
    from.className = "arena-from";
    from.textContent = message.from + (message.to ? " \u2192 " + message.to : "");
    const content = document.createElement("span");
    content.className = "arena-content";
    content.textContent = message.redacted ? "(private message)" : message.content;
    item.append(from, " ", content);
    list.append(item);
  }

  function connect() {
    const socket = new WebSocket(scheme + location.host + list.dataset.socket);
    socket.onmessage = (event) => {
      const frame = JSON.parse(event.data);
      if (frame.type === "transcript") {
        list.replaceChildren();
        seen.clear();
      }
      frame.messages.forEach(render);
      const status = document.getElementById("arena-status");
      if (status && frame.state) status.textContent = frame.state.status;
      if (frame.state && frame.state.status === "ended") {
        const scores = document.getElementById("arena-scores");
        scores.replaceChildren(
          ...frame.state.scores.map((score, position) => {
            const line = document.createElement("p");
            line.textContent = `Player ${position + 1}: security ${score.security}, utility ${score.utility}`;
            return line;
          }),
        );
      }
    };
    socket.onclose = () => setTimeout(connect, 3000);
  }
  connect();
})();
