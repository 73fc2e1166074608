import pytest

from challenges.models import Challenge, Secret
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

URL = "/console/api/challenges"


def _error(response, status):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "fields"}
    assert body["error"]["message"]
    return body["error"]


def test_it_refuses_unknown_fields(creator_api):
    error = _error(creator_api.post(URL, {"name": "X", "colour": "red"}, format="json"), 400)
    assert error["fields"] == {"colour": ["Unknown field."]}
    assert not Challenge.objects.exists()


@pytest.mark.parametrize(
    "field,value",
    [
        ("success_type", "telepathy"),
        ("scoring_strategy", "loudest"),
        ("evaluator_type", "vibes"),
        ("target", "mainframe"),
        ("max_attempts_per_hour", -1),
        ("is_active", "perhaps"),
        ("theme", ["not", "an", "object"]),
        ("mask_variables", "not-a-list"),
        ("starts_at", "yesterday"),
    ],
)
def test_it_refuses_values_of_the_wrong_type(creator_api, field, value):
    payload = {"name": "X", "success_pattern": "x", field: value}
    error = _error(creator_api.post(URL, payload, format="json"), 400)
    assert field in error["fields"]
    assert not Challenge.objects.exists()


def test_it_refuses_theme_keys_outside_the_whitelist(creator_api):
    payload = {"name": "X", "success_pattern": "x", "theme": {"background-image": "url(evil)"}}
    error = _error(creator_api.post(URL, payload, format="json"), 400)
    assert "background-image" in error["fields"]["theme"][0]
    payload["theme"] = {"accent": "red; background: url(evil)"}
    _error(creator_api.post(URL, payload, format="json"), 400)
    assert not Challenge.objects.exists()


def test_it_refuses_a_secret_placeholder_without_a_secret(creator_api):
    payload = {"name": "X", "success_pattern": "{{secret}}"}
    error = _error(creator_api.post(URL, payload, format="json"), 400)
    assert "secret_ref" in error["fields"]
    payload["secret_ref"] = "missing"
    error = _error(creator_api.post(URL, payload, format="json"), 400)
    assert "no secret named 'missing'" in error["fields"]["secret_ref"][0]


def test_it_refuses_an_end_before_the_start(creator_api):
    payload = {
        "name": "X",
        "success_pattern": "x",
        "starts_at": "2030-01-02T00:00:00Z",
        "ends_at": "2030-01-01T00:00:00Z",
    }
    error = _error(creator_api.post(URL, payload, format="json"), 400)
    assert "ends_at" in error["fields"]


def test_it_refuses_an_invalid_regex_on_update_and_keeps_the_old_one(creator_api, workspace):
    challenge = make_challenge(workspace=workspace, success_type="regex", success_pattern="ok")
    response = creator_api.patch(
        f"{URL}/{challenge.id}", {"success_pattern": "[z-a]"}, format="json"
    )
    error = _error(response, 400)
    assert "success_pattern" in error["fields"]
    challenge.refresh_from_db()
    assert challenge.success_pattern == "ok"


def test_it_refuses_malformed_json(creator_api):
    response = creator_api.post(URL, data='{"name": "X",', content_type="application/json")
    error = _error(response, 400)
    assert error["code"] == "parse_error"


def test_it_refuses_a_json_array_body(creator_api):
    response = creator_api.post(URL, data="[1, 2]", content_type="application/json")
    _error(response, 400)


def test_it_refuses_other_content_types(creator_api):
    response = creator_api.post(
        URL, data="name=X", content_type="application/x-www-form-urlencoded"
    )
    assert _error(response, 415)["code"] == "unsupported_media_type"


def test_it_refuses_an_oversized_body_and_writes_nothing(creator_api, settings):
    payload = {"name": "X", "success_pattern": "x", "description": "a" * 300_000}
    error = _error(creator_api.post(URL, payload, format="json"), 413)
    assert error["code"] == "too_large"
    assert not Challenge.objects.exists()


def test_it_refuses_a_secret_without_a_value(creator_api):
    error = _error(creator_api.post("/console/api/secrets", {"name": "s"}, format="json"), 400)
    assert "value" in error["fields"]
    assert not Secret.objects.exists()


@pytest.mark.parametrize("limit", ["-1", "0", "101", "ten", "1.5"])
def test_it_refuses_bad_leaderboard_limits(anon_api, workspace, limit):
    challenge = make_challenge(workspace=workspace)
    response = anon_api.get(f"/web/api/challenges/{challenge.id}/leaderboard?limit={limit}")
    assert "limit" in _error(response, 400)["fields"]


@pytest.mark.parametrize("query", ["limit=-5", "offset=-1", "limit=abc"])
def test_it_refuses_bad_pagination(creator_api, query):
    _error(creator_api.get(f"{URL}?{query}"), 400)


def test_it_answers_unknown_methods_in_the_error_shape(creator_api):
    assert _error(creator_api.put(URL, {}, format="json"), 405)["code"] == "method_not_allowed"


def test_it_answers_not_found_for_malformed_ids(creator_api, anon_api):
    assert _error(creator_api.get(f"{URL}/not-a-uuid"), 404)["code"] == "not_found"
    _error(anon_api.get("/web/api/challenges/not-a-uuid"), 404)
