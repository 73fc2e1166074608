// The proof page checks the signature again in the browser (SPEC §10): it downloads the
// proof and the published keys, rebuilds the canonical JSON (sorted keys, no spaces) and
// verifies the Ed25519 signature with WebCrypto. No inline scripts: the CSP forbids them.
(function () {
  "use strict";
  var box = document.getElementById("browser-check");
  if (!box) return;

  function say(text, outcome) {
    box.textContent = text;
    box.classList.remove("verdict-win", "verdict-error", "verdict-loss");
    box.classList.add(outcome === true ? "verdict-win" : outcome === false ? "verdict-error" : "verdict-loss");
    box.dataset.outcome = outcome === true ? "verified" : outcome === false ? "invalid" : "unknown";
  }

  // The same bytes Python's json.dumps(sort_keys=True, separators=(",", ":"),
  // ensure_ascii=False) gives: JSON.stringify escapes strings alike.
  function canonical(value) {
    if (value === null || typeof value !== "object") return JSON.stringify(value);
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    return "{" + Object.keys(value).sort().map(function (key) {
      return JSON.stringify(key) + ":" + canonical(value[key]);
    }).join(",") + "}";
  }

  function bytes(base64) {
    var text = atob(base64);
    var out = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out;
  }

  function json(url) {
    return fetch(url, { credentials: "omit", headers: { Accept: "application/json" } }).then(function (response) {
      if (!response.ok) throw new Error(url + " answered " + response.status);
      return response.json();
    });
  }

  if (!window.crypto || !window.crypto.subtle || !window.fetch) {
    say("This browser cannot check signatures itself (no WebCrypto); the server's check above stands.", null);
    return;
  }
  Promise.all([json(box.dataset.proofUrl), json(box.dataset.keysUrl)]).then(function (found) {
    var download = found[0];
    var key = (found[1].keys || []).filter(function (k) { return k.key_id === download.key_id; })[0];
    if (!key) return { missing: true };
    return crypto.subtle.importKey("raw", bytes(key.public_key), { name: "Ed25519" }, false, ["verify"])
      .then(function (publicKey) {
        return crypto.subtle.verify(
          { name: "Ed25519" }, publicKey, bytes(download.signature),
          new TextEncoder().encode(canonical(download.proof))
        );
      })
      .then(function (valid) { return { valid: valid, keyId: download.key_id }; });
  }).then(function (result) {
    if (result.missing) say("Not verified in your browser: no published key has this proof's key id.", false);
    else if (result.valid) say("Verified in your browser too: the Ed25519 signature of key " + result.keyId + " matches this proof.", true);
    else say("Not verified in your browser: the signature does not match this proof.", false);
  }).catch(function (error) {
    say("Your browser could not check the signature (" + error.message + "); the server's check above stands.", null);
  });
})();
