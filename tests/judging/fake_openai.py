"""A real local HTTP server that speaks enough of the OpenAI chat completions API.

Tool calling (agents, SPEC §9): a request's `tools` and its `role: tool` messages arrive as
sent (tests read them in `requests`); a `Reply` with `tool_calls` answers an assistant
message whose `tool_calls` are `{id, type: "function", function: {name, arguments}}` (the
arguments JSON-encoded unless given as a string) with `finish_reason: "tool_calls"`.
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the assistant message's text
    body: str | None = None  # a raw body instead of a completion
    delay: float = 0.0
    # Streamed requests (`"stream": true`): the content in pieces of this many characters,
    # with this pause before each.
    chunk_chars: int = 4
    chunk_delay: float = 0.0
    # Calls the assistant makes: [{"name": …, "arguments": {…} or a raw string}].
    tool_calls: list[dict] | None = None
    total_tokens: int = 20


def verdict(**fields: Any) -> Reply:
    return Reply(content=json.dumps(fields))


@dataclass
class FakeOpenAI:
    url: str
    requests: list[dict] = field(default_factory=list)
    # Decides each answer from the request JSON; tests replace it.
    answer: Callable[[dict], Reply] = lambda request: verdict(passed=None, rating=7, feedback="ok")


def tool_call(name: str, arguments: Any = None, *, call_id: str = "") -> dict:
    return {"name": name, "arguments": {} if arguments is None else arguments, "id": call_id}


def completion(
    content: str | None, model: str, tool_calls: list[dict] | None = None, total_tokens: int = 20
) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": call.get("id") or f"call_fake_{number}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call.get("arguments"), str)
                    else json.dumps(call.get("arguments") or {}),
                },
            }
            for number, call in enumerate(tool_calls, start=1)
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if tool_calls else "stop",
                "message": message,
            }
        ],
        "usage": {
            "prompt_tokens": total_tokens // 2,
            "completion_tokens": total_tokens - total_tokens // 2,
            "total_tokens": total_tokens,
        },
    }


def completion_chunks(content: str, model: str, chunk_chars: int) -> list[dict]:
    """The server-sent chunks of a streamed completion, the usage last (include_usage)."""
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model}
    base["created"] = int(time.time())
    pieces = [content[i : i + chunk_chars] for i in range(0, len(content), chunk_chars)]
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}}]}
        for piece in pieces
    ]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
    chunks.append({**base, "choices": [], "usage": usage})
    return chunks


def serve() -> tuple[FakeOpenAI, ThreadingHTTPServer]:
    fake = FakeOpenAI(url="")

    class Handler(BaseHTTPRequestHandler):
        # Keep-alive, as real endpoints do, so a test can tell a reused connection.
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            request["_path"] = self.path
            request["_authorization"] = self.headers.get("Authorization", "")
            request["_client_port"] = self.client_address[1]
            fake.requests.append(request)
            reply = fake.answer(request)
            if reply.delay:
                time.sleep(reply.delay)
            if request.get("stream") and reply.status == 200 and reply.body is None:
                self._stream(reply, request.get("model", ""))
                return
            if reply.body is not None:
                body = reply.body
            elif reply.status == 200:
                body = json.dumps(
                    completion(
                        reply.content if reply.tool_calls else reply.content or "",
                        request.get("model", ""),
                        reply.tool_calls,
                        reply.total_tokens,
                    )
                )
            else:
                body = json.dumps({"error": {"message": "fake error", "type": "fake"}})
            data = body.encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _stream(self, reply: Reply, model: str) -> None:
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in completion_chunks(reply.content or "", model, reply.chunk_chars):
                    if reply.chunk_delay and chunk["choices"]:
                        time.sleep(reply.chunk_delay)
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    return fake, server
