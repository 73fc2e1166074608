// Live transcript of an arena session: the socket sends new messages (already redacted for
// this viewer) and the session state; nothing is fetched again.
(function () {
  const list = document.getElementById("arena-transcript");
  if (!list) return;
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const seen = new Set();
  // Each seat's display name by invite code (never shown itself), from the page.
  const namesNode = document.getElementById("arena-names");
  const names = namesNode ? JSON.parse(namesNode.textContent) : {};
  const nameOf = (code) => names[code] || code;
  const named = (text) =>
    Object.keys(names).reduce((out, code) => out.split(code).join(names[code]), text);
  const statusNode = document.getElementById("arena-status");
  const endedAtLoad = statusNode && statusNode.textContent.trim() === "ended";

  function render(message) {
    const key = message.channel + "#" + message.index;
    if (seen.has(key)) return;
    seen.add(key);
    const item = document.createElement("li");
    item.className = "arena-message " + (message.channel.startsWith("challenge_") ? "operator" : "chat");
    if (message.redacted) item.classList.add("redacted");
    const from = document.createElement("span");
    from.className = "arena-from";
    from.textContent = nameOf(message.from) + (message.to ? " \u2192 " + nameOf(message.to) : "");
    const content = document.createElement("span");
    content.className = "arena-content";
    content.textContent = message.redacted ? "(private message)" : named(message.content);
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
      if (frame.state && frame.state.status === "ended" && !endedAtLoad) {
        // The end reveals who sat in each seat and the scores: the page draws them.
        location.reload();
      }
    };
    socket.onclose = () => setTimeout(connect, 3000);
  }
  connect();
})();
