"""Every operation in the OpenAPI schema, sent hostile shapes through the real stack, answers
a 4xx in the JSON error shape (or a 2xx), never a 5xx.

The shapes are the ones that once gave 500s: JSON nested 60,000 deep, NUL in every string
(PostgreSQL stores none: run this under CI=true with DATABASE_URL too), integers beyond the
database's columns, values of the wrong type, NUL and huge numbers in query strings and
paths. Each operation is sent them as anonymous and as a workspace creator (the bridge's as
a bridge key holder), with path ids of real rows, of unknown rows and malformed ones.
"""

import json
import uuid
from functools import cache
from typing import Any
from urllib.parse import urlencode

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from challenges.services.bridge_keys import bridge_key_create
from challenges.services.collections import collection_create
from challenges.services.secrets import secret_create
from players.services import token_issue
from tests import factories

pytestmark = pytest.mark.django_db

DEEP_JSON = "[" * 60_000 + "]" * 60_000
HUGE_INTEGERS = [2**31, 10**12, -(2**31) - 1, 10**30]
WRONG_TYPES = [[], {}, "not-the-type", 1.5, True, None]
NUL_TEXT = "a\x00b"


@cache
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations() -> list[tuple[str, str]]:
    return [
        (method.upper(), path)
        for path, item in schema()["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    ]


def resolve(node: dict) -> dict:
    while "$ref" in node:
        node = schema()["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    for combined in ("allOf", "oneOf", "anyOf"):
        if combined in node:
            return resolve(node[combined][0])
    return node


def plausible(node: dict) -> Any:
    """A value of the schema's type, so a mutation elsewhere reaches deeper code."""
    node = resolve(node)
    if "enum" in node:
        return next((value for value in node["enum"] if value is not None), None)
    kind = node.get("type")
    if kind == "object":
        properties = node.get("properties", {})
        return {name: plausible(properties[name]) for name in node.get("required", [])}
    if kind == "array":
        return []
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    return {
        "uuid": str(uuid.uuid4()),
        "email": "fuzz@example.com",
        "date-time": "2030-01-01T00:00:00Z",
        "uri": "https://example.com/",
    }.get(node.get("format"), "fuzz")


def mutations_of(node: dict) -> list[tuple[str, Any]]:
    """What replaces one property's value: NUL text, huge integers, wrong types."""
    node = resolve(node)
    kind = node.get("type")
    found: list[tuple[str, Any]] = [(f"wrong type {value!r}", value) for value in WRONG_TYPES]
    if kind == "string" or kind is None:
        found.append(("NUL in text", NUL_TEXT))
    if kind in ("integer", "number"):
        found += [(f"integer {value}", value) for value in HUGE_INTEGERS]
        found.append(("float 1e308", 1e308))
    if kind == "object" or kind is None:
        found += [
            ("NUL in a nested value", {"key": NUL_TEXT}),
            ("NUL in a nested key", {"k\x00": 1}),
            ("a nested huge integer", {"key": 10**30}),
            ("nested 200 deep", json.loads("[" * 200 + "]" * 200)),
        ]
    if kind == "array":
        found += [("array of NUL text", [NUL_TEXT]), ("array of huge integers", [10**12])]
        item = resolve(node.get("items", {}))
        if item.get("type") == "object":
            base = plausible(item)
            for name, prop in item.get("properties", {}).items():
                for label, value in mutations_of(prop)[:8]:
                    found.append((f"[0].{name}: {label}", [{**base, name: value}]))
    return found


def body_cases(operation: dict) -> list[tuple[str, str | bytes, str]]:
    """(label, raw body, content type) for every hostile body of one operation."""
    content = operation.get("requestBody", {}).get("content", {})
    if not content:
        return [("deep nesting on a body-less operation", DEEP_JSON, "application/json")]
    body_schema = resolve(content.get("application/json", next(iter(content.values())))["schema"])
    base = plausible(body_schema)
    cases: list[tuple[str, str | bytes, str]] = [
        ("a plausible body", json.dumps(base), "application/json"),
        ("JSON nested 60,000 deep", DEEP_JSON, "application/json"),
        ("JSON nested 60,000 deep as text", DEEP_JSON, "text/plain"),
        ("objects nested 100 deep", '{"a":' * 100 + "1" + "}" * 100, "application/json"),
        ("broken JSON", '{"a": ', "application/json"),
        ("NaN", '{"a": NaN}', "application/json"),
        ("a 5,000-digit integer", '{"a": ' + "9" * 5000 + "}", "application/json"),
        ("not UTF-8", b'{"a": "\xff\xfe"}', "application/json"),
        ("a JSON list", "[]", "application/json"),
        ("a JSON string", '"x"', "application/json"),
        ("an empty body", "", "application/json"),
        ("a form body", "a=%00&b=1", "application/x-www-form-urlencoded"),
    ]
    for name, prop in body_schema.get("properties", {}).items():
        for label, value in mutations_of(prop):
            body = json.dumps({**base, name: value})
            cases.append((f"{name}: {label}", body, "application/json"))
    return cases


def query_cases(operation: dict) -> list[tuple[str, dict]]:
    cases: list[tuple[str, dict]] = [("no query", {})]
    for parameter in operation.get("parameters", []):
        if parameter["in"] != "query":
            continue
        for value in ("\x00", "9" * 30, "-1", "[]", "", "x" * 2000):
            cases.append((f"?{parameter['name']}={value[:20]!r}", {parameter["name"]: value}))
    return cases


@pytest.fixture
def world():
    workspace = factories.make_workspace("Fuzz Works")
    creator = factories.make_creator(workspace=workspace, email="fuzz-owner@example.com")
    secret = secret_create(workspace=workspace, name="vault", value="SWORDFISH")
    challenge = factories.make_challenge(
        workspace=workspace,
        slug="fuzz-challenge",
        system_prompt="The password is {{secret}}.",
        secret_ref="vault",
        success_pattern="{{secret}}",
    )
    collection = collection_create(workspace=workspace, user=creator, name="Fuzz collection")
    key, raw_key = bridge_key_create(workspace=workspace, name="fuzz")
    return {
        "ids": {
            "challenge_id": challenge.id,
            "collection_id": collection.id,
            "secret_id": secret.id,
            "key_id": key.id,
        },
        "creator": f"Bearer {token_issue(user=creator)}",
        "bridge": f"Bearer {raw_key}",
    }


def error_shape_problem(response) -> str | None:
    if response.status_code >= 500:
        return "server error"
    if response.status_code < 400:
        return None
    try:
        error = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        return "4xx outside the JSON error shape"
    if set(error) != {"code", "message", "fields"}:
        return "4xx outside the JSON error shape"
    return None


@pytest.mark.parametrize("method,path", operations(), ids=lambda value: value)
def test_it_never_answers_a_5xx_to_hostile_input(world, method, path):
    operation = schema()["paths"][path][method.lower()]
    credentials = {"anonymous": None, "creator": world["creator"]}
    if path.startswith("/bridge/"):
        credentials["bridge key"] = world["bridge"]
    real_path = path
    for name, value in world["ids"].items():
        real_path = real_path.replace("{" + name + "}", str(value))
    paths = {real_path}
    if "{" in path:
        for filler in (str(uuid.uuid4()), "not-a-uuid", "x" * 300, "%00"):
            paths.add(path.split("{")[0] + filler + path.split("}", 1)[1])
    # DELETE goes last, so the other shapes still find the real rows.
    bodies = body_cases(operation) if method != "DELETE" else [("no body", "", "")]
    queries = query_cases(operation)
    failures = []
    for persona, authorization in credentials.items():
        headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
        client = Client(raise_request_exception=False, **headers)
        sends = [(p, "plausible", {}, "", "") for p in sorted(paths, key=lambda p: p != real_path)]
        sends += [(real_path, label, query, "", "") for label, query in queries]
        sends += [(real_path, label, {}, body, kind) for label, body, kind in bodies]
        for target, label, query, body, content_type in sends:
            if method == "GET":
                response = client.get(target, query)
            else:
                url = f"{target}?{urlencode(query)}" if query else target
                response = client.generic(method, url, body, content_type=content_type)
            problem = error_shape_problem(response)
            if problem:
                failures.append(
                    f"{persona} {method} {target} [{label}] -> {response.status_code} {problem}: "
                    f"{response.content[:160]!r}"
                )
    assert not failures, "\n".join(failures[:40])


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "path", ["/ws/leaderboards/collection/x/", "/ws/nowhere/", "/ws/leaderboards/challenge/"]
)
def test_it_closes_websockets_to_unknown_paths_with_4404(path):
    from config.asgi import application

    async def scenario():
        communicator = WebsocketCommunicator(
            application, path, headers=[(b"origin", b"http://127.0.0.1")]
        )
        connected, code = await communicator.connect(timeout=5)
        assert (connected, code) == (False, 4404)

    async_to_sync(scenario)()


def test_it_refuses_bridge_counters_beyond_their_columns(world):
    client = Client(HTTP_AUTHORIZATION=world["bridge"])
    for field, value in (("tokens_total", 10**12), ("elapsed_ms", 2**31)):
        body = {
            "challenge_id": str(world["ids"]["challenge_id"]),
            "output": "nothing",
            "workflow_run_id": str(uuid.uuid4()),
            field: value,
        }
        response = client.post(
            "/bridge/dify/challenge-evaluator", json.dumps(body), content_type="text/plain"
        )
        assert response.status_code == 400
        assert field in response.json()["error"]["fields"]


def test_it_explains_why_a_deep_or_nul_body_is_refused():
    client = Client()
    deep = client.post("/web/api/login", DEEP_JSON, content_type="application/json")
    assert deep.status_code == 400
    assert "nested more than 64 levels" in deep.json()["error"]["message"]
    nul = client.post(
        "/web/api/login", '{"email": "a\\u0000@example.com"}', content_type="application/json"
    )
    assert nul.status_code == 400
    assert "NUL" in nul.json()["error"]["message"]
    query = client.get("/web/api/challenges", {"limit": "\x00"})
    assert query.status_code == 400
    assert "NUL" in query.json()["error"]["message"]


def test_it_refuses_nul_and_deep_json_typed_into_the_admin(world):
    from challenges.models import Challenge

    admin = get_user_model().objects.create_superuser(
        username="root@example.com", email="root@example.com", password="pass-word-42"
    )
    challenge = Challenge.objects.get(id=world["ids"]["challenge_id"])
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    url = f"/admin/challenges/challenge/{challenge.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {}
    for name in form.fields:
        value = form[name].value()
        if value is not None:
            data[name] = value
    for bad in ('{"a": "\\u0000"}', '{"\\u0000": 1}', "[" * 5000 + "]" * 5000):
        response = client.post(url, {**data, "target_config": bad})
        assert response.status_code == 200  # the form again, with the error
        assert "target_config" in response.context["adminform"].form.errors
    challenge.refresh_from_db()
    assert challenge.target_config == {}
