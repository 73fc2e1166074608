// Reads a fetch() response of server-sent events (the play and turn streams) and calls
// onEvent(name, payload) for each complete event, payload parsed from its JSON data.
window.readServerEvents = function (response, onEvent) {
  var reader = response.body.getReader();
  var decoder = new TextDecoder();
  var buffer = "";
  function pump() {
    return reader.read().then(function (step) {
      if (step.done) return;
      buffer += decoder.decode(step.value, { stream: true });
      var end;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        var block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        var name = "", data = "";
        block.split("\n").forEach(function (line) {
          if (line.indexOf("event: ") === 0) name = line.slice(7);
          else if (line.indexOf("data: ") === 0) data += line.slice(6);
        });
        if (name && data) onEvent(name, JSON.parse(data));
      }
      return pump();
    });
  }
  return pump();
};
