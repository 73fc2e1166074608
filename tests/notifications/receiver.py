"""A real local HTTP receiver for webhook tests: answers a scripted list of statuses, then
200, and keeps every request it got."""

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    statuses: list[int] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    url: str = ""

    def start(self) -> "Receiver":
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server hook name
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                receiver.requests.append(
                    Received(headers={k.lower(): v for k, v in self.headers.items()}, body=body)
                )
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
