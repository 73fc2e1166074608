// The play box with the reply streamed as the model writes it (SPEC §4c "Streaming").
// The form keeps working without JavaScript (a plain post) and htmx stays its fallback for
// browsers without streamed fetch; here the submit is taken over, the prompt is posted to
// the Server-Sent Events endpoint, and each `chunk` is appended to the reply as it comes.
// No inline scripts or handlers: the page's CSP forbids them.
(function () {
  "use strict";
  var form = document.querySelector("form[data-stream-url]");
  if (!form || !window.fetch || !window.ReadableStream || !window.TextDecoder) return;

  var result = document.getElementById("play-result");
  var button = form.querySelector("button[type=submit]");
  var thinking = document.getElementById("thinking");
  var busy = false;

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function setBusy(on) {
    busy = on;
    if (button) button.disabled = on;
    if (thinking) thinking.classList.toggle("htmx-request", on);
  }

  function showError(message) {
    result.replaceChildren(element("div", "verdict verdict-error", message));
    result.firstChild.setAttribute("role", "alert");
  }

  function replyBox() {
    var box = element("div", "reply");
    box.appendChild(element("p", "reply-label", "Model reply"));
    var text = element("div", "reply-text reply-streaming");
    text.id = "streamed-reply";
    // Keep the model's line breaks as it writes (CSSOM, which the CSP allows).
    text.style.whiteSpace = "pre-wrap";
    box.appendChild(text);
    result.replaceChildren(box);
    return text;
  }

  function showVerdict(data, text) {
    var won = data.challenge_succeeded;
    var verdict = element("div", "verdict " + (won ? "verdict-win" : "verdict-loss"));
    verdict.setAttribute("role", "status");
    var words = data.outcome || {};
    verdict.appendChild(element("p", "verdict-title", words.title || (won
      ? "Challenge solved! The defence is broken."
      : "Not this time: the defence held.")));
    var label = result.querySelector(".reply-label");
    if (label && words.reply_label) label.textContent = words.reply_label;
    if (data.judge_feedback) verdict.appendChild(element("p", "feedback", data.judge_feedback));
    var meta = element("p", "verdict-meta");
    if (data.judge_rating !== null) meta.appendChild(element("span", "", "Rating " + data.judge_rating));
    if (words.score) meta.appendChild(element("span", "", words.score));
    if (data.codename) meta.appendChild(element("span", "", "Against " + data.codename));
    if (data.leaderboard_rank) meta.appendChild(element("span", "", "You are #" + data.leaderboard_rank + " on the leaderboard"));
    verdict.appendChild(meta);
    if (won && data.proof_url) {
      var note = element("p", "proof-note");
      var proof = element("a", "", "The signed proof of your break →");
      proof.id = "proof-link";
      proof.href = data.proof_url;
      note.appendChild(proof);
      verdict.appendChild(note);
    }
    if (won && data.next_level_url) {
      var next = element("p", "next-level");
      var link = element("a", "button", data.next_level_label || "Next level →");
      link.id = "next-level";
      link.href = data.next_level_url;
      next.appendChild(link);
      verdict.appendChild(next);
    }
    // The final reply is what the server says this player may see of it.
    text.textContent = data.response;
    text.classList.remove("reply-streaming");
    result.insertBefore(verdict, result.firstChild);
  }

  function refreshStandings() {
    var board = document.getElementById("leaderboard");
    if (board && window.htmx) window.htmx.trigger(board, "refresh");
    fetch(window.location.href, { credentials: "same-origin" })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        // Only the history section is parsed: the whole page's nonce'd style, parsed here,
        // would be an inline style without this document's nonce (a CSP violation).
        var start = html.indexOf('<section class="card history" id="history"');
        var end = start === -1 ? -1 : html.indexOf("</section>", start);
        if (end === -1) return;
        var section = html.slice(start, end + "</section>".length);
        var fresh = new DOMParser().parseFromString(section, "text/html").getElementById("history");
        var current = document.getElementById("history");
        if (fresh && current) current.replaceWith(document.importNode(fresh, true));
      })
      .catch(function () {});
  }

  function handle(name, data, text) {
    if (name === "chunk") {
      text.textContent += data.text;
    } else if (name === "result") {
      showVerdict(data, text);
      refreshStandings();
    } else if (name === "error") {
      showError(data.error.message);
    }
  }

  function readEvents(response, text) {
    return window.readServerEvents(response, function (name, payload) {
      handle(name, payload, text);
    });
  }

  form.addEventListener("submit", function (event) {
    // Ahead of htmx's own handler on the form, which would post it the old way.
    event.preventDefault();
    event.stopImmediatePropagation();
    if (busy) return;
    var prompt = form.querySelector("textarea[name=prompt]").value;
    var picker = form.querySelector("[name=codename]");
    var body = { prompt: prompt };
    if (picker) body.codename = picker.value;
    var token = form.querySelector("input[name=csrfmiddlewaretoken]");
    setBusy(true);
    var text = replyBox();
    fetch(form.getAttribute("data-stream-url"), {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "X-CSRFToken": token ? token.value : ""
      },
      body: JSON.stringify(body)
    }).then(function (response) {
      if (!response.ok) {
        return response.json().then(function (body) {
          showError(body.error ? body.error.message : "The attempt was refused.");
        }, function () { showError("The attempt was refused."); });
      }
      return readEvents(response, text);
    }).catch(function () {
      showError("The connection to the model was lost. Please try again.");
    }).then(function () { setBusy(false); });
  }, true);
})();
