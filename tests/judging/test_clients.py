"""One client per process and endpoint: repeated calls reuse one pooled connection."""

import asyncio
import json

from judging.clients import async_openai_client, http_client
from judging.llm_judge import judge_with_llm_async
from judging.targets import TargetConfig, complete_async
from tests.judging.fake_openai import Reply

ENDPOINT = {"base_url": "http://127.0.0.1:9/v1", "api_key": "k", "timeout": 5, "max_retries": 0}


def test_it_gives_the_same_client_for_the_same_endpoint_and_another_for_another():
    async def clients():
        return (
            async_openai_client(**ENDPOINT),
            async_openai_client(**{**ENDPOINT, "timeout": 5.0}),
            async_openai_client(**{**ENDPOINT, "api_key": "k2"}),
        )

    first, same, other = asyncio.run(clients())

    assert first is same
    assert other is not first
    assert http_client(timeout=3, retries=1) is http_client(timeout=3.0, retries=1)


def test_it_gives_one_async_client_per_event_loop():
    async def twice():
        return async_openai_client(**ENDPOINT), async_openai_client(**ENDPOINT)

    first, again = asyncio.run(twice())
    other_loop, _ = asyncio.run(twice())

    assert first is again
    assert other_loop is not first


def test_it_sends_two_judgements_over_one_connection(fake_openai):
    async def twice():
        for _ in range(2):
            await judge_with_llm_async(
                goal="g", response="r", config={"judge_model": "openai/judge-1"}
            )

    asyncio.run(twice())

    ports = [request["_client_port"] for request in fake_openai.requests]
    assert len(ports) == 2
    assert ports[0] == ports[1]


def test_it_sends_two_target_calls_over_one_connection(fake_openai):
    config = TargetConfig(
        provider="openai", model="tiny", base_url=fake_openai.url, api_key="k", max_retries=0
    )

    async def twice():
        for _ in range(2):
            await complete_async(system_prompt="", prompt="hi", user="u", config=config)

    asyncio.run(twice())

    ports = [request["_client_port"] for request in fake_openai.requests]
    assert len(ports) == 2
    assert ports[0] == ports[1]


def test_it_sends_two_dify_calls_over_one_connection(fake_openai):
    answer = {"data": {"status": "succeeded", "outputs": {"text": "No."}}}
    fake_openai.answer = lambda request: Reply(body=json.dumps(answer))
    config = TargetConfig(provider="dify", base_url=fake_openai.url, api_key="app-1")

    async def twice():
        return [
            await complete_async(system_prompt="", prompt="hi", user="u", config=config)
            for _ in range(2)
        ]

    assert [reply.text for reply in asyncio.run(twice())] == ["No.", "No."]

    assert [request["_path"] for request in fake_openai.requests] == ["/v1/workflows/run"] * 2
    assert fake_openai.requests[0]["_client_port"] == fake_openai.requests[1]["_client_port"]
