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

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("try-it");
    if (!box) return;
    var button = document.getElementById("try-run");
    var status = document.getElementById("try-status");

    button.addEventListener("click", function () {
      var body = new FormData();
      body.append("prompt", document.getElementById("try-prompt").value);
      body.append("csrfmiddlewaretoken", csrfToken());
      button.disabled = true;
      status.textContent = "The model is thinking…";
      fetch(box.getAttribute("data-url"), {
        method: "POST",
        body: body,
        credentials: "same-origin",
        headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
      })
        .then(function (response) {
          return response.json().then(function (data) { return { ok: response.ok, data: data }; });
        })
        .then(function (answer) {
          var data = answer.data;
          if (!answer.ok) {
            status.textContent = (data.error && data.error.message) || "The try failed.";
            return;
          }
          status.textContent = data.error || "Nothing was recorded.";
          document.getElementById("try-result").hidden = false;
          show("try-verdict", data.error ? "no verdict" : data.passed ? "Passed: the challenge would be solved" : "Failed: the defence held");
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
