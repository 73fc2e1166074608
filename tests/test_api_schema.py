import pytest

pytestmark = pytest.mark.django_db


def test_it_serves_the_openapi_schema_and_docs(anon_api, client):
    schema = anon_api.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for path in (
        "/console/api/challenges",
        "/console/api/challenges/{challenge_id}",
        "/console/api/challenges/{challenge_id}/attempts",
        "/console/api/secrets",
        "/console/api/login",
        "/web/api/challenges",
        "/web/api/challenges/{challenge_id}/leaderboard",
    ):
        assert path in paths
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()


def test_health(client):
    assert client.get("/health").json() == {"status": "ok"}
