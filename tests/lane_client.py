"""A test client that sends requests through the served ASGI application, lanes included.

Django's test client calls Django directly and never meets the raw lanes in front of it
(core/fastlane.py); this client speaks ASGI to `config.asgi.application` like uvicorn
does, on one event loop of its own, so the lanes' pools live as long as the client.
It takes the calls the tests make of Django's client: post(url, data, content_type,
HTTP_* headers), get(url), credentials(HTTP_AUTHORIZATION=…); `header_lines` adds raw
header lines after those, repeated names included, as a client on the wire may send them.
"""

import asyncio
import json
import threading

import httpx

from core.aio_clients import aio_clients_close


class LaneResponse:
    def __init__(self, response: httpx.Response) -> None:
        self.status_code = response.status_code
        self.headers = response.headers
        self.content = response.content

    def json(self):
        return json.loads(self.content)

    def __getitem__(self, name: str) -> str:
        return self.headers[name]

    def has_header(self, name: str) -> bool:
        return name in self.headers


def _headers(extra: dict) -> dict[str, str]:
    headers = {}
    for name, value in extra.items():
        if name.startswith("HTTP_"):
            headers[name[5:].replace("_", "-").lower()] = value
    return headers


class LaneClient:
    def __init__(self, application=None) -> None:
        """`application`: another build of the served app (one that read changed settings
        at its start, as Django's middleware does); config.asgi's by default."""
        if application is None:
            from config.asgi import application

        self._credentials: dict = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._client = self._run(self._open(application))

    async def _open(self, application) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=application, client=("127.0.0.1", 40000))
        return httpx.AsyncClient(transport=transport, base_url="http://testserver")

    def _run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=120)

    def credentials(self, **extra) -> None:
        self._credentials = extra

    def post(
        self,
        url: str,
        data=b"",
        content_type: str = "application/json",
        header_lines: list[tuple[str, str]] = (),
        **extra,
    ):
        body = data.encode() if isinstance(data, str) else data
        headers = {
            "content-type": content_type,
            **_headers(self._credentials),
            **_headers(extra),
        }
        lines = [*headers.items(), *header_lines]
        return LaneResponse(self._run(self._client.post(url, content=body, headers=lines)))

    def get(self, url: str, **extra):
        headers = {**_headers(self._credentials), **_headers(extra)}
        return LaneResponse(self._run(self._client.get(url, headers=headers)))

    def close(self) -> None:
        async def shut() -> None:
            await self._client.aclose()
            await aio_clients_close()

        self._run(shut())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
