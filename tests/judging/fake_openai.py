"""A real local HTTP server that speaks enough of the OpenAI chat completions API."""

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


def verdict(**fields: Any) -> Reply:
    return Reply(content=json.dumps(fields))


@dataclass
class FakeOpenAI:
    url: str
    requests: list[dict] = field(default_factory=list)
    # Decides each answer from the request JSON; tests replace it.
    answer: Callable[[dict], Reply] = lambda request: verdict(passed=None, rating=7, feedback="ok")


def completion(content: str, model: str) -> dict:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


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
            if reply.body is not None:
                body = reply.body
            elif reply.status == 200:
                body = json.dumps(completion(reply.content or "", request.get("model", "")))
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

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    return fake, server
