// A conversation level's chat (SPEC §9): each turn is posted to the session's streaming
// endpoint and the reply appended as the model writes it. Without JavaScript the same
// forms post to the page. No inline scripts or handlers: the page's CSP forbids them.
(function () {
  "use strict";
  var chat = document.getElementById("chat");
  if (!chat || !window.fetch || !window.ReadableStream || !window.TextDecoder) return;

  var form = document.getElementById("turn-form");
  var turns = document.getElementById("turns");
  var status = document.getElementById("chat-status");
  var result = document.getElementById("turn-result");
  var button = document.getElementById("send-turn");
  var thinking = document.getElementById("thinking");
  var token = form.querySelector("input[name=csrfmiddlewaretoken]");
  var busy = false;

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function headers(accept) {
    return {
      "Content-Type": "application/json",
      "Accept": accept,
      "X-CSRFToken": token ? token.value : ""
    };
  }

  function setBusy(on) {
    busy = on;
    button.disabled = on;
    if (thinking) thinking.classList.toggle("htmx-request", on);
  }

  function showError(message) {
    result.replaceChildren(element("div", "verdict verdict-error", message));
    result.firstChild.setAttribute("role", "alert");
  }

  function refused(response) {
    return response.json().then(function (body) {
      throw new Error(body.error ? body.error.message : "The turn was refused.");
    }, function () { throw new Error("The turn was refused."); });
  }

  // Several targets the player chooses among: the model a new session is opened against.
  function picker() { return document.querySelector("#turn-form [name=codename]"); }

  function openSession() {
    var current = chat.getAttribute("data-session");
    if (current) return Promise.resolve(current);
    return fetch(chat.getAttribute("data-new-session-url"), {
      method: "POST", credentials: "same-origin", headers: headers("application/json"),
      body: JSON.stringify(picker() ? { codename: picker().value } : {})
    }).then(function (response) {
      if (!response.ok) return refused(response);
      return response.json().then(function (session) {
        chat.setAttribute("data-session", session.id);
        return session.id;
      });
    });
  }

  function addTurn(prompt) {
    var item = element("li", "turn");
    var player = element("div", "turn-player");
    player.appendChild(element("span", "turn-label", "You"));
    player.appendChild(element("div", "turn-text", prompt));
    var model = element("div", "turn-model");
    model.appendChild(element("span", "turn-label", "Model"));
    var text = element("div", "turn-text reply-streaming");
    model.appendChild(text);
    item.appendChild(player);
    item.appendChild(model);
    turns.appendChild(item);
    return { item: item, text: text, model: model, label: player.firstChild };
  }

  function finish(data, turn) {
    turn.item.setAttribute("data-turn", data.index);
    turn.label.textContent = "You · turn " + data.index;
    turn.text.textContent = data.response;
    turn.text.classList.remove("reply-streaming");
    if (data.judge_feedback) turn.model.appendChild(element("p", "turn-feedback", data.judge_feedback));
    var session = data.session;
    if (data.challenge_succeeded) {
      turn.item.classList.add("turn-won");
      var verdict = element("div", "verdict verdict-win");
      verdict.setAttribute("role", "status");
      verdict.appendChild(element("p", "verdict-title", "Challenge solved in " + data.index + " turn" + (data.index === 1 ? "" : "s") + "!"));
      if (data.leaderboard_rank) verdict.appendChild(element("p", "verdict-meta", "You are #" + data.leaderboard_rank + " on the leaderboard"));
      var links = element("p", "proof-note");
      var transcript = element("a", "", "Read the transcript →");
      transcript.id = "transcript-link";
      transcript.href = "/sessions/" + session.id + "/";
      links.appendChild(transcript);
      if (data.proof_url) {
        links.appendChild(document.createTextNode(" · "));
        var proof = element("a", "", "The signed proof of your break");
        proof.id = "proof-link";
        proof.href = data.proof_url;
        links.appendChild(proof);
      }
      verdict.appendChild(links);
      result.replaceChildren(verdict);
    } else {
      result.replaceChildren();
    }
    if (session.state === "open") {
      status.textContent = session.turns_left + " turn" + (session.turns_left === 1 ? "" : "s") + " left in this session.";
    } else {
      chat.setAttribute("data-session", "");
      if (session.state === "won") {
        status.textContent = "You won this session in " + data.index + " turn" + (data.index === 1 ? "" : "s") + ".";
      } else {
        status.textContent = "This session is over (no turns or tokens left). Start a new one.";
      }
      form.hidden = true;
    }
    var board = document.getElementById("leaderboard");
    if (data.challenge_succeeded && board && window.htmx) window.htmx.trigger(board, "refresh");
  }

  function readEvents(response, turn) {
    return window.readServerEvents(response, function (name, payload) {
      if (name === "chunk") turn.text.textContent += payload.text;
      else if (name === "result") finish(payload, turn);
      else if (name === "error") { turn.item.remove(); showError(payload.error.message); }
    });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (busy) return;
    var box = form.querySelector("textarea[name=prompt]");
    var prompt = box.value;
    if (!prompt.trim()) return;
    setBusy(true);
    result.replaceChildren();
    var turn = null;
    openSession().then(function (sessionId) {
      var url = chat.getAttribute("data-stream-template").replace("00000000-0000-0000-0000-000000000000", sessionId);
      turn = addTurn(prompt);
      return fetch(url, {
        method: "POST", credentials: "same-origin", headers: headers("text/event-stream"),
        body: JSON.stringify({ prompt: prompt })
      });
    }).then(function (response) {
      if (!response.ok) return refused(response);
      box.value = "";
      return readEvents(response, turn);
    }).catch(function (error) {
      if (turn) turn.item.remove();
      showError(error.message || "The connection to the model was lost. Please try again.");
    }).then(function () { setBusy(false); });
  });
})();
