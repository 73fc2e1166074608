// Preloaded (node --require) into SpecArena's own test files, run unchanged: the modules
// through which a test builds its in-process server resolve to adapter.cjs, which answers
// from our running server instead. Everything else (node:test, SpecArena's key helpers,
// its scoring library) loads as it is.
"use strict";
const Module = require("module");
const path = require("path");

const ADAPTER = path.join(__dirname, "adapter.cjs");
const PACKAGES = new Set([
  "@hono/node-server",
  "@specarena/server",
  "@specarena/server/auth",
  "@specarena/engine/engine",
]);
// Relative paths, as a test file names them (tsx adds the extension before resolving).
const RELATIVE = new Set([
  "./helpers/create-app",
  "../auth/index",
  "../../index",
]);

function isTestFile(parent) {
  const name = parent && parent.filename;
  return Boolean(name) && /[\\/](server|cli)[\\/]test[\\/]/.test(name);
}

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (isTestFile(parent)) {
    const bare = String(request).replace(/\.(ts|js)$/, "");
    if (PACKAGES.has(bare) || RELATIVE.has(bare)) return ADAPTER;
  }
  return resolveFilename.call(this, request, parent, ...rest);
};
