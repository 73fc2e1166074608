// "Try it" on the challenge form: posts the prompt with fetch and shows the answer. The
// prompt box is never rewritten, so pressing the button again sends the same text.
(function () {
  "use strict";

  function csrfToken() {
    var field = document.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  function show(id, text) {
    document.getElementById(id).textContent = text;
  }

  function plural(count, noun) {
    return count + " " + noun + (count === 1 ? "" : "s");
  }

  function item(list, className, text) {
    var entry = document.createElement("li");
    entry.className = className;
    entry.textContent = text;
    list.appendChild(entry);
    return entry;
  }

  var STEP_WORDS = { model: "Model", tool_call: "Tool call", tool_result: "Result", final: "Final answer" };

  function showTrace(data) {
    var trace = document.getElementById("try-agent-trace");
    trace.textContent = "";
    (data.steps || []).forEach(function (step) {
      var text = STEP_WORDS[step.kind] || step.kind;
      if (step.kind === "tool_call") {
        text += ": " + step.tool + " " + JSON.stringify(step.args || {});
        if (step.refused_by) text += " (refused by " + step.refused_by + ")";
      } else if (step.kind === "tool_result") {
        text += " of " + step.tool + ": " + step.content;
      } else if (step.content) {
        text += ": " + step.content;
      }
      item(trace, "step-" + step.kind, text);
    });
    var benign = document.getElementById("try-agent-benign");
    benign.textContent = "";
    if (!(data.benign || []).length) item(benign, "", "This scenario has no benign tasks.");
    (data.benign || []).forEach(function (task) {
      var text = task.passed
        ? "Benign task '" + task.task + "' passes."
        : task.broken_by.length
          ? "Benign task '" + task.task + "' fails with this defence (" + task.broken_by.join(", ") + ")."
          : "Benign task '" + task.task + "' fails, even without the agent defences.";
      item(benign, task.passed ? "benign-pass" : "benign-fail", text);
    });
  }

  // One try posted as the form would post it; the answer's JSON with whether it was a 2xx.
  function postTry(box, body) {
    body.append("csrfmiddlewaretoken", csrfToken());
    return fetch(box.getAttribute("data-url"), {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
    }).then(function (response) {
      return response.json().then(function (data) { return { ok: response.ok, data: data }; });
    });
  }

  function runAgent(box, button) {
    var status = document.getElementById("try-agent-status");
    var body = new FormData();
    body.append("run", "agent");
    document.querySelectorAll(".try-slot").forEach(function (slot) {
      body.append("slot:" + slot.getAttribute("data-slot"), slot.value);
    });
    button.disabled = true;
    status.textContent = "The agent is working…";
    postTry(box, body)
      .then(function (answer) {
        var data = answer.data;
        if (data.error && typeof data.error === "object") {
          status.textContent = data.error.message;
          return;
        }
        if (data.error) { status.textContent = data.error; return; }
        status.textContent = plural(data.tokens_total, "token") + ". Nothing was recorded.";
        document.getElementById("try-agent-result").hidden = false;
        show("try-agent-verdict", (data.won ? "Won: " : "Not won: ") + data.why);
        showTrace(data);
      })
      .catch(function () { status.textContent = "The server did not answer; try again."; })
      .finally(function () { button.disabled = false; });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("try-it");
    if (!box) return;
    var button = document.getElementById("try-run");
    var status = document.getElementById("try-status");

    var guessButton = document.getElementById("try-guess");
    if (guessButton) {
      guessButton.addEventListener("click", function () {
        var body = new FormData();
        body.append("answer", document.getElementById("try-answer").value);
        var guessStatus = document.getElementById("try-guess-status");
        postTry(box, body)
          .then(function (answer) {
            var data = answer.data;
            if (data.error) { guessStatus.textContent = data.error.message; return; }
            guessStatus.textContent = data.guess_right
              ? "Right: this guess would solve the challenge. Nothing was recorded."
              : "Wrong: this guess would not solve it. Nothing was recorded.";
          })
          .catch(function () { guessStatus.textContent = "The server did not answer; try again."; });
      });
    }

    var agentButton = document.getElementById("try-agent-run");
    if (agentButton) agentButton.addEventListener("click", function () { runAgent(box, agentButton); });
    if (!button) return;

    button.addEventListener("click", function () {
      var body = new FormData();
      body.append("prompt", document.getElementById("try-prompt").value);
      button.disabled = true;
      status.textContent = "The model is thinking…";
      postTry(box, body)
        .then(function (answer) {
          var data = answer.data;
          if (!answer.ok) {
            status.textContent = (data.error && data.error.message) || "The try failed.";
            return;
          }
          status.textContent = data.error || "Nothing was recorded.";
          document.getElementById("try-result").hidden = false;
          show("try-verdict", data.error ? "no verdict" : data.passed ? "Passed: the challenge would be solved" : data.defence_fired ? "Failed: the defence held" : (data.feedback || "Failed"));
          show("try-defence", data.defence_fired || "none");
          show("try-rating", data.rating === null ? "–" : String(data.rating));
          show("try-feedback", data.feedback || "–");
          show("try-tokens", data.tokens_total === null ? "–" : plural(data.tokens_total, "token"));
          show("try-time", data.elapsed_ms === null ? "–" : (data.elapsed_ms / 1000).toFixed(1) + " s");
          show("try-reply", data.reply || "");
        })
        .catch(function () {
          status.textContent = "The server did not answer; try again.";
        })
        .finally(function () {
          button.disabled = false;
        });
    });
  });
})();
