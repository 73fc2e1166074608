// The agent scenario editor of the challenge form (challenges/admin_agent.py). The server
// renders a fixed number of rows for tools, parameters, slots, matchers, benign tasks and
// tool guards; this script shows the rows in use plus one empty row of each kind (the next
// appears as you type), offers the scenario's tool and parameter names in the tool and
// argument boxes, and lists the placeholders each tool's "returns" can use. Without it,
// every row is shown and the form works the same.
(function () {
  "use strict";

  var BASE_HELP =
    "What the tool answers. Put in a call's argument with {{arg:<parameter>}} and a slot's " +
    "text with {{slot:<slot name>}}.";

  function rowsFor(prefix) {
    return Array.prototype.filter.call(document.querySelectorAll(".form-row"), function (row) {
      return Array.prototype.some.call(row.classList, function (name) {
        return name.indexOf("field-" + prefix) === 0;
      });
    });
  }

  function inputsOf(rows, prefix) {
    var found = [];
    rows.forEach(function (row) {
      row.querySelectorAll("input, textarea").forEach(function (input) {
        if (input.name && input.name.indexOf(prefix) === 0) found.push(input);
      });
    });
    return found;
  }

  function inUse(rows, prefix) {
    if (rows.some(function (row) { return row.querySelector(".errorlist"); })) return true;
    return inputsOf(rows, prefix).some(function (input) {
      return input.type === "checkbox" ? input.checked : input.value.trim() !== "";
    });
  }

  // Items `prefix(1)`, `prefix(2)`, …: each shown when in use, plus the first empty one.
  function refreshGroup(count, prefix, inner) {
    var emptyShown = false;
    for (var number = 1; number <= count; number += 1) {
      var rows = rowsFor(prefix(number));
      if (!rows.length) return;
      var used = inUse(rows, prefix(number));
      var shown = used || !emptyShown;
      if (!used && shown) emptyShown = true;
      rows.forEach(function (row) { row.hidden = !shown; });
      if (shown && inner) inner(number);
    }
  }

  function countOf(pattern) {
    var highest = 0;
    document.querySelectorAll("[name^=agent_]").forEach(function (input) {
      var match = pattern.exec(input.name);
      if (match) highest = Math.max(highest, Number(match[1]));
    });
    return highest;
  }

  function values(selector) {
    var seen = [];
    document.querySelectorAll(selector).forEach(function (input) {
      var value = input.value.trim();
      if (value && seen.indexOf(value) < 0) seen.push(value);
    });
    return seen;
  }

  function fillList(id, names) {
    var list = document.getElementById(id);
    if (!list) return;
    list.textContent = "";
    names.forEach(function (name) {
      var option = document.createElement("option");
      option.value = name;
      list.appendChild(option);
    });
  }

  function refreshNames(tools, params) {
    fillList("agent-tool-names", values("input[name^=agent_tool][name$=_name]:not([name*=_param])"));
    fillList("agent-param-names", values("input[name*=_param][name$=_name]"));
    var slots = values("input[name^=agent_slot][name$=_name]").map(function (name) {
      return "{{slot:" + name + "}}";
    });
    for (var tool = 1; tool <= tools; tool += 1) {
      var help = document.getElementById("id_agent_tool" + tool + "_returns_helptext");
      if (!help) continue;
      var args = values("input[name^=agent_tool" + tool + "_param][name$=_name]").map(
        function (name) { return "{{arg:" + name + "}}"; }
      );
      var names = args.concat(slots);
      help.textContent = BASE_HELP + (names.length ? " Here: " + names.join(", ") + "." : "");
    }
    return params;
  }

  function refresh() {
    var tools = countOf(/^agent_tool(\d+)_name$/);
    var params = countOf(/^agent_tool\d+_param(\d+)_name$/);
    var winArgs = countOf(/^agent_win_arg(\d+)_field$/);
    var benignArgs = countOf(/^agent_benign\d+_arg(\d+)_field$/);
    refreshGroup(tools, function (n) { return "agent_tool" + n + "_"; }, function (tool) {
      refreshGroup(params, function (n) { return "agent_tool" + tool + "_param" + n + "_"; });
    });
    refreshGroup(countOf(/^agent_slot(\d+)_name$/), function (n) { return "agent_slot" + n + "_"; });
    refreshGroup(winArgs, function (n) { return "agent_win_arg" + n + "_"; });
    refreshGroup(countOf(/^agent_benign(\d+)_task$/), function (n) { return "agent_benign" + n + "_"; }, function (task) {
      refreshGroup(benignArgs, function (n) { return "agent_benign" + task + "_arg" + n + "_"; });
    });
    refreshGroup(countOf(/^agent_guard(\d+)_tool$/), function (n) { return "agent_guard" + n + "_"; });
    refreshNames(tools, params);
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (!document.querySelector("[name=agent_task]")) return;
    refresh();
    document.querySelectorAll(".agent-editor").forEach(function (section) {
      section.addEventListener("input", refresh);
      section.addEventListener("change", refresh);
    });
  });
})();
