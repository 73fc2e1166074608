import pytest

from tests.judging.fake_openai import serve


@pytest.fixture
def fake_openai(settings):
    """A local OpenAI-compatible server the judge is pointed at."""
    fake, server = serve()
    settings.OPENAI_BASE_URL = fake.url
    settings.OPENAI_API_KEY = "sk-test"
    settings.JUDGE_MAX_RETRIES = 0
    # Lets the same server stand in for a Dify target (the operator's allowlist).
    settings.EGRESS_ALLOW_HOSTS = [fake.url.split("//", 1)[1].split("/", 1)[0]]
    yield fake
    server.shutdown()
    server.server_close()
