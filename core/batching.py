"""Group work that many requests of one event loop send at once into one round trip.

`LoopBatcher(run)` keeps one batch in flight per event loop: a call that arrives while
none is under way goes alone at once (idle, nobody waits for company); calls that arrive
while one is under way wait for it and then go together in the next. `run` gets the
items of a batch and returns one result per item, in order; an exception it raises is
each waiting call's.
"""

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class _LoopQueue(Generic[Item, Result]):
    def __init__(self) -> None:
        self.waiting: list[tuple[Item, asyncio.Future]] = []
        self.running = False
        # The loop keeps only a weak reference to a task: one collected mid-batch would
        # leave `running` set and every later call waiting for ever.
        self.drain: asyncio.Task | None = None


class LoopBatcher(Generic[Item, Result]):
    def __init__(
        self, run: Callable[[list[Item]], Awaitable[Sequence[Result]]], *, limit: int
    ) -> None:
        self.run = run
        self.limit = limit
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopQueue] = (
            weakref.WeakKeyDictionary()
        )

    async def submit(self, item: Item) -> Result:
        loop = asyncio.get_running_loop()
        queue = self._queues.get(loop)
        if queue is None:
            queue = self._queues[loop] = _LoopQueue()
        future = loop.create_future()
        queue.waiting.append((item, future))
        if not queue.running:
            queue.running = True
            queue.drain = loop.create_task(self._drain(queue))
        return await future

    async def _drain(self, queue: _LoopQueue) -> None:
        try:
            while queue.waiting:
                batch = queue.waiting[: self.limit]
                queue.waiting = queue.waiting[self.limit :]
                try:
                    results = await self.run([item for item, _ in batch])
                except Exception as error:  # noqa: BLE001 - handed to each waiting call
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(error)
                    continue
                for (_, future), result in zip(batch, results, strict=True):
                    if not future.done():
                        future.set_result(result)
        finally:
            queue.running = False
            queue.drain = None
