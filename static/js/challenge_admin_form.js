// The challenge form shows the sections that apply to the chosen evaluator, target and
// scoring strategy, opens a section holding an error, and hides the OpenAI model name
// for other targets. Sections carry `when-<field>-<value>` classes set by the admin.
(function () {
  "use strict";

  function valueOf(field) {
    var input = document.getElementById("id_" + field);
    return input ? input.value : null;
  }

  function conditions(fieldset) {
    var found = [];
    fieldset.classList.forEach(function (name) {
      var match = /^when-(evaluator_type|target|scoring_strategy|mode)-(.+)$/.exec(name);
      if (match) found.push({ field: match[1], value: match[2] });
    });
    return found;
  }

  function applies(fieldset) {
    return conditions(fieldset).some(function (condition) {
      return valueOf(condition.field) === condition.value;
    });
  }

  function refresh() {
    document.querySelectorAll("fieldset.module").forEach(function (fieldset) {
      if (!conditions(fieldset).length) return;
      var shown = applies(fieldset) || fieldset.querySelector(".errorlist") !== null;
      fieldset.hidden = !shown;
      var details = fieldset.querySelector("details");
      if (details && shown) details.open = true;
    });
    var modelRow = document.querySelector(".form-row.field-target_model");
    if (modelRow && valueOf("target") !== null) {
      modelRow.hidden = valueOf("target") !== "openai" && !modelRow.querySelector(".errorlist");
    }
    document.querySelectorAll("fieldset.module details").forEach(function (details) {
      if (details.querySelector(".errorlist")) details.open = true;
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    ["evaluator_type", "target", "scoring_strategy", "mode"].forEach(function (field) {
      var input = document.getElementById("id_" + field);
      if (input) input.addEventListener("change", refresh);
    });
    refresh();
  });
})();
