// What SpecArena's test files get instead of their in-process server (see resolve.cjs).
//
// `app.request(path, init)` is `fetch(<our server> + path, init)`: the standalone-mode
// server for createApp/createTestApp, the auth-mode one for createAuthApp. Both serve the
// same throwaway database. `serve()` starts nothing and reports the port of that server.
//
// The engine object stands for the calls a test makes in-process on SpecArena's engine:
// a player's join, move, sync and chat go to the standalone server over HTTP as a client
// would send them; what only the engine's own storage can answer (a session with its
// private state, the raw messages of a channel, emptying the tables, pruning, marking a
// profile as a benchmark) is asked of the control endpoint the pytest process serves, which
// reads and writes our database with our own code.
"use strict";

const STANDALONE = required("SPECARENA_STANDALONE_URL");
const AUTH = required("SPECARENA_AUTH_URL");
const CONTROL = required("SPECARENA_CONTROL_URL");

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this through tests/arena`);
  return value.replace(/\/$/, "");
}

async function control(path, body) {
  const response = await fetch(CONTROL + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`control ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function call(method, path, body) {
  const response = await fetch(STANDALONE + path, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
}

function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null) search.set(name, String(value));
  }
  return search.toString();
}

class App {
  constructor(baseUrl) {
    this.baseUrl = baseUrl;
    this.fetch = (request) => fetch(request);
    this.fetch.baseUrl = baseUrl;
  }

  async request(path, init) {
    const url = /^https?:/.test(path) ? path : this.baseUrl + path;
    const response = await fetch(url, init);
    const type = response.headers.get("content-type") || "";
    if (!type.includes("text/event-stream") || !response.body) return response;
    return new Response(response.body.pipeThrough(oneEventPerChunk()), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }
}

// In-process, each Server-Sent Event is its own chunk of the response stream, and
// SpecArena's test helper reads one event per chunk. Over a socket, events sent while the
// reader is not reading arrive merged; this splits them back at their blank lines.
function oneEventPerChunk() {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = "";
  return new TransformStream({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      let end;
      while ((end = pending.indexOf("\n\n")) !== -1) {
        controller.enqueue(encoder.encode(pending.slice(0, end + 2)));
        pending = pending.slice(end + 2);
      }
    },
    flush(controller) {
      if (pending) controller.enqueue(encoder.encode(pending));
    },
  });
}

class Chat {
  async chatSend(channel, from, content, to) {
    return call("POST", "/api/chat/send", { channel, from, content, ...(to ? { to } : {}) });
  }

  async sendMessage(channel, from, content, to) {
    return this.chatSend(channel, from, content, to);
  }

  async chatSync(channel, viewer, index) {
    return call("GET", `/api/chat/sync?${query({ channel, from: viewer, index })}`);
  }

  async getMessagesForChannel(channel) {
    return control(`/messages?${query({ channel })}`);
  }
}

class Users {
  async setUser(userId, profile) {
    return control("/users", { userId, ...profile });
  }

  async getUser(userId) {
    const response = await fetch(`${STANDALONE}/api/users/${encodeURIComponent(userId)}`);
    return response.status === 404 ? null : response.json();
  }

  async getUsers(userIds) {
    return call("GET", `/api/users/batch?${query({ ids: userIds.join(",") })}`);
  }

  async listUsers() {
    return call("GET", "/api/users");
  }
}

class Scoring {
  async getScoring(challengeType) {
    return call("GET", `/api/scoring/${encodeURIComponent(challengeType)}`);
  }

  async getGlobalScoring() {
    return call("GET", "/api/scoring");
  }

  // Our scoring runs in the transaction that ends the game: nothing is left to wait for.
  async waitForIdle() {}
}

class ArenaEngine {
  constructor() {
    this.chat = new Chat();
    this.users = new Users();
    this.scoring = new Scoring();
  }

  async clearRuntimeState() {
    await control("/reset", {});
  }

  async challengeJoin(invite, userId) {
    return call("POST", "/api/arena/join", { invite, ...(userId ? { userId } : {}) });
  }

  async challengeMessage(challengeId, from, messageType, content) {
    return call("POST", "/api/arena/message", { challengeId, from, messageType, content });
  }

  async challengeSync(channel, viewer, index) {
    return call("GET", `/api/arena/sync?${query({ channel, from: viewer, index })}`);
  }

  async chatSync(channel, viewer, index) {
    return this.chat.chatSync(channel, viewer, index);
  }

  async getChallenge(challengeId) {
    const { challenge } = await control(`/challenge?${query({ id: challengeId })}`);
    return challenge ?? undefined;
  }

  async getChallengeFromInvite(invite) {
    const { challenge } = await control(`/challenge?${query({ invite })}`);
    if (challenge) return { success: true, data: challenge };
    return {
      success: false,
      error: "NOT_FOUND",
      message: `Challenge not found for invite: ${invite}`,
    };
  }

  async getPlayerIdentities(challengeId) {
    const challenge = await this.getChallenge(challengeId);
    if (!challenge || challenge.state.status !== "ended") return null;
    return challenge.state.playerIdentities;
  }

  async listChallenges(options = {}) {
    const page = await call("GET", `/api/challenges?${query(options)}`);
    return { items: page.challenges, total: page.total };
  }

  async getChallengesByType(challengeType, options = {}) {
    const path = `/api/challenges/${encodeURIComponent(challengeType)}?${query(options)}`;
    const page = await call("GET", path);
    return { items: page.challenges, total: page.total };
  }

  async pruneStaleChallenges(now) {
    const { removed } = await control("/prune", { now: now ?? Date.now() });
    return removed;
  }
}

function createEngine() {
  return new ArenaEngine();
}

function createApp() {
  return new App(STANDALONE);
}

function createTestApp() {
  return { app: createApp(), engine: new ArenaEngine() };
}

async function createTestAppFromEnv() {
  return createTestApp();
}

function createAuthApp() {
  return { app: new App(AUTH), engine: new ArenaEngine(), auth: null };
}

function serve(options, listening) {
  const url = new URL(options.fetch.baseUrl || STANDALONE);
  const info = { address: url.hostname, family: "IPv4", port: Number(url.port) };
  if (listening) setImmediate(() => listening(info));
  return {
    address: () => info,
    close: (done) => {
      if (done) setImmediate(done);
    },
  };
}

module.exports = {
  App,
  ArenaEngine,
  createApp,
  createAuthApp,
  createEngine,
  createTestApp,
  createTestAppFromEnv,
  defaultEngine: new ArenaEngine(),
  serve,
};
