"""Hostile input through the real stack never gets a 5xx, nor an HTML answer under the API
prefixes (/api/, /web/api/, /console/api/, /bridge/), whose errors keep their surface's
shape: SpecArena's {"error": "..."} under /api/, the SPEC's elsewhere.

Four walks. Every operation of the OpenAPI schema, each body field mutated in turn. Every
URL pattern Django resolves (admin, allauth, pages, the arena, the catch-alls), with path
parameters filled with real rows' ids and with junk, probed with every method and, for the
persona who reaches deepest, sent every hostile body and query; the other personas
(anonymous, player, creator, bridge key, arena session key) get the probes, junk ids and the
bodies refused before anything. Every websocket route, sent hostile frames. Every JSON box
of the admin's forms.

The shapes are the ones that once gave 500s: JSON nested 60,000 deep, NUL in every string
(PostgreSQL stores none: run this under CI=true with DATABASE_URL too), 1e400 and integers
beyond the database's columns, values of the wrong type, wrong content types, oversized
bodies, NUL and overflowing numbers in query strings and paths, binary websocket frames.
"""

import json
import re
import uuid
from functools import cache
from typing import Any
from urllib.parse import urlencode

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django import forms
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLResolver, get_resolver, reverse
from django.urls import resolve as resolve_path
from drf_spectacular.generators import SchemaGenerator

from challenges.services.bridge_keys import bridge_key_create
from challenges.services.collections import collection_create
from challenges.services.secrets import secret_create
from notifications.delivery import unsubscribe_token
from notifications.services import webhook_endpoint_create
from players.models import ApiToken
from players.services import end_user_for_account, token_issue
from redblue.arena.auth import session_key_for
from redblue.arena.services import arena_join, arena_session_create
from redblue.teams.services.challenges import red_blue_challenge_create
from tests import factories
from tests.servers import free_port

pytestmark = pytest.mark.django_db

DEEP_JSON = "[" * 60_000 + "]" * 60_000
HUGE_INTEGERS = [2**31, 10**12, -(2**31) - 1, 10**30]
WRONG_TYPES = [[], {}, "not-the-type", 1.5, True, None]
NUL_TEXT = "a\x00b"
# Python has no float that dumps as 1e400 (it overflows to infinity): a marker stands in
# and the body's text is rewritten.
INFINITE = 1.2345678e300
INFINITE_TEXT = json.dumps(INFINITE)


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
        found.append(("1e400", INFINITE))
    if kind == "object" or kind is None:
        found += [
            ("NUL in a nested value", {"key": NUL_TEXT}),
            ("NUL in a nested key", {"k\x00": 1}),
            ("a nested huge integer", {"key": 10**30}),
            ("a nested 1e400", {"key": INFINITE}),
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
            body = json.dumps({**base, name: value}).replace(INFINITE_TEXT, "1e400")
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
def world(settings):
    """Real rows for every kind of id a route takes, and the credentials of each persona."""
    settings.ARENA_AUTH = "auth"
    workspace = factories.make_workspace("Fuzz Works")
    creator = factories.make_creator(workspace=workspace, email="fuzz-owner@example.com")
    player = factories.make_player("fuzz-player@example.com")
    superuser = get_user_model().objects.create_superuser(
        username="root@example.com", email="root@example.com", password="pass-word-42"
    )
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
    red_blue = red_blue_challenge_create(workspace=workspace, user=creator, name="Fuzz league")
    # A local port nothing listens on: a test delivery is refused at once, never sent out.
    settings.EGRESS_ALLOW_HOSTS = ["127.0.0.1"]
    endpoint = webhook_endpoint_create(workspace=workspace, url=f"http://127.0.0.1:{free_port()}/")
    end_user = end_user_for_account(workspace=workspace, account=player)
    player_token = token_issue(user=player)
    session = arena_session_create(type_name="secret-keeper")
    joined = arena_join(invite=session.invites[0], user_id="f" * 64)
    session_key = session_key_for(challenge_id=str(session.pk), player_index=joined.player_index)
    factories.make_player("fuzz-bystander@example.com")  # the account the admin walk deletes
    return {
        "ids": {
            "challenge_id": [challenge.id, red_blue.id],
            "collection_id": [collection.id],
            "secret_id": [secret.id],
            "key_id": [key.id],
            "endpoint_id": [endpoint.id],
            "end_user_id": [end_user.id],
            "token_id": [ApiToken.objects.filter(user=player).values_list("id", flat=True)[0]],
            "slug": [challenge.slug, collection.slug],
            "workspace_slug": [workspace.slug],
            "token": [unsubscribe_token(account_id=player.pk, preference="notify_on_first_blood")],
            "name": ["secret-keeper", session.pk],
            "type_name": ["secret-keeper"],
            "session_id": [session.pk],
            "channel": [session.pk],
            "invite": [session.invites[1]],
            "user_id": ["f" * 64],
            "app_label": ["challenges"],
            "path": ["nowhere"],
        },
        "accounts": {"player": player, "creator": creator, "superuser": superuser},
        "authorization": {
            "player": f"Bearer {player_token}",
            "creator": f"Bearer {token_issue(user=creator)}",
            "bridge key": f"Bearer {raw_key}",
            "arena session key": f"Bearer {session_key}",
        },
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
    credentials = {"anonymous": None, "creator": world["authorization"]["creator"]}
    if path.startswith("/bridge/"):
        credentials["bridge key"] = world["authorization"]["bridge key"]
    real_path = path
    for name, values in world["ids"].items():
        value = values[-1] if "red-blue" in path else values[0]
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
    client = Client(HTTP_AUTHORIZATION=world["authorization"]["bridge key"])
    for field, value in (("tokens_total", 10**12), ("elapsed_ms", 2**31)):
        body = {
            "challenge_id": str(world["ids"]["challenge_id"][0]),
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


# --- every URL pattern Django resolves -------------------------------------------------

API_PREFIXES = ("/api/", "/web/api/", "/console/api/", "/bridge/")
OPENAPI_PAGES = ("/api/schema/", "/api/docs/")
JUNK_IDS = [str(uuid.uuid4()), "not-a-uuid", "9" * 30, "x" * 300, "%00"]
# Fields sent when a route has no schema: the arena's, the pages' forms and the usual ones.
COMMON_FIELDS = [
    "invite", "inviteId", "userId", "publicKey", "signature", "timestamp", "challengeId",
    "content", "messageType", "channel", "to", "from", "username", "model", "name", "slug",
    "prompt", "answer", "email", "password", "code", "method", "team", "scoring_config",
    "evaluator_config", "target_config", "judge_config", "theme", "challenge_ids", "ids",
]  # fmt: skip
HOSTILE_LITERALS = [
    "1e400", "-1e400", "99999999999999999999999", "NaN", "Infinity", '"a\\u0000b"',
    '{"k\\u0000": 1}', '{"k": 1e400}', "[]", "{}", "true", "null", "1.5", "-1",
    '"' + "x" * 20_000 + '"',
]  # fmt: skip
LONE_LITERALS = ["9" * 5000, "-" + "9" * 5000, "1" + "0" * 400 + ".5"]
QUERY_NUMBERS = ["limit", "offset", "index", "p", "page"]
QUERY_TEXTS = ["channel", "ids", "status", "format", "since", "workspace", "type", "key", "q"]
FORM = "application/x-www-form-urlencoded"
OVERSIZED = '{"a": "' + "x" * 300_000 + '"}'


def url_patterns() -> list[tuple[str, Any]]:
    """(route, URLPattern) for every pattern the root URLconf resolves, includes flattened."""

    def walk(resolver, prefix: str):
        for entry in resolver.url_patterns:
            if isinstance(entry, URLResolver):
                yield from walk(entry, prefix + str(entry.pattern))
            else:
                yield prefix + str(entry.pattern), entry

    return list(walk(get_resolver(), ""))


def fill(route: str, values: dict[str, str]) -> str:
    """`route` (a path() route or a regex) with each parameter replaced by its value."""
    path = re.sub(r"\(\?!.*?\)", "", route).replace("^", "").replace("$", "")
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: values.get(m[1], "fuzz"), path)
    path = re.sub(r"\(\?:([^()|]*)(?:\|[^()]*)?\)\??", r"\1", path)  # its first alternative
    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values.get(m[1], "fuzz"), path)
    return "/" + path


def parameters(route: str) -> list[str]:
    return [a or b for a, b in re.findall(r"<(?:\w+:)?(\w+)>|\(\?P<(\w+)>", route)]


def admin_object_ids(entry) -> list[str]:
    # Admin routes are named <app>_<model>_<view>: the id of a row of that model, if any.
    parts = (entry.name or "").split("_")
    for cut in range(len(parts) - 1, 0, -1):
        app_label, model_name = parts[0], "_".join(parts[1:cut])
        try:
            model = apps.get_model(app_label, model_name)
        except (LookupError, ValueError):
            continue
        # The newest row: for accounts the world's bystander, so a delete spares the personas.
        row = model._default_manager.order_by("-pk").values_list("pk", flat=True).first()
        return [str(row)] if row is not None else []
    return []


def paths_for(route: str, entry, world) -> tuple[str, list[str]]:
    """(the path with real ids, paths with junk in each parameter in turn)."""
    names = parameters(route)
    real = {name: str(world["ids"].get(name, ["fuzz"])[0]) for name in names}
    if "red-blue" in route and "challenge_id" in names:
        real["challenge_id"] = str(world["ids"]["challenge_id"][-1])
    if "object_id" in names:
        real["object_id"] = (admin_object_ids(entry) or ["1"])[0]
    if "content_type_id" in names:
        real["content_type_id"] = "1"
    alternatives = re.search(r"\(\?P<app_label>([\w|]+)\)", route)
    if alternatives:
        real["app_label"] = alternatives[1].split("|")[0]
    junk = []
    for name in names:
        for filler in [*(str(v) for v in world["ids"].get(name, [])[1:]), *JUNK_IDS]:
            junk.append(fill(route, {**real, name: filler}))
    return fill(route, real), junk


def personas_for(route: str) -> list[str]:
    """Who calls the route, the one who reaches deepest first (it gets every hostile input;
    the others the probes, junk ids and the bodies that must be refused before anything)."""
    if route.startswith("admin/"):
        return ["superuser", "creator", "anonymous"]
    if route.startswith("api/v1/"):  # the same views as under /api/, walked there as all
        return ["anonymous, standalone arena", "arena session key"]
    if route.startswith("api/"):
        others = ["anonymous", "player", "creator", "bridge key"]
        return ["anonymous, standalone arena", "arena session key", *others]
    if route.startswith("bridge/"):
        return ["bridge key", "anonymous", "player", "creator", "arena session key"]
    if route.startswith("console/api/"):
        return ["creator", "anonymous", "player", "bridge key", "arena session key"]
    if route.startswith("web/api/"):
        return ["player", "anonymous", "creator", "bridge key", "arena session key"]
    return ["player", "anonymous", "creator"]


def client_for(persona: str, world) -> Client:
    authorization = world["authorization"].get(persona)
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    client = Client(raise_request_exception=False, **headers)
    if persona in world["accounts"]:
        client.force_login(world["accounts"][persona])
    return client


def fields_for(path: str) -> list[str]:
    operation = schema()["paths"].get(re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", path), {})
    found = set()
    for method in operation.values():
        content = (
            method.get("requestBody", {}).get("content", {}) if isinstance(method, dict) else {}
        )
        for body in content.values():
            found |= set(resolve(body["schema"]).get("properties", {}))
    return sorted(found) or COMMON_FIELDS


def hostile_bodies(route: str) -> list[tuple[str, Any, str]]:
    """(label, body, content type); a dict body is sent as a multipart form."""
    fields = fields_for("/" + route)
    cases: list[tuple[str, Any, str]] = [
        ("JSON nested 60,000 deep", DEEP_JSON, "application/json"),
        ("JSON nested 60,000 deep as text", DEEP_JSON, "text/plain"),
        ("objects nested 100 deep", '{"a":' * 100 + "1" + "}" * 100, "application/json"),
        ("broken JSON", '{"a": ', "application/json"),
        ("not UTF-8", b'{"a": "\xff\xfe"}', "application/json"),
        ("a JSON list", "[]", "application/json"),
        ("a JSON string", '"x"', "application/json"),
        ("an empty body", "", "application/json"),
        ("a bogus charset", "{}", "application/json; charset=bogus"),
        ("XML", "<a>1</a>", "application/xml"),
        ("a form with NUL", "&".join(f"{f}=a%00b" for f in fields), FORM),
        ("multipart with NUL", {f: NUL_TEXT for f in fields}, "multipart/form-data"),
        ("an oversized body", OVERSIZED, "application/json"),
    ]  # fmt: skip
    for literal in HOSTILE_LITERALS:
        body = "{" + ", ".join(f'"{field}": {literal}' for field in fields) + "}"
        cases.append((f"every field {literal[:24]}", body, "application/json"))
    for literal in LONE_LITERALS:
        body = f'{{"{fields[0]}": {literal}}}'
        cases.append((f"a field {literal[:12]}…", body, "application/json"))
    return cases


def hostile_queries() -> list[tuple[str, dict]]:
    cases: list[tuple[str, dict]] = [("NUL", {"limit": "\x00"})]
    for name in QUERY_NUMBERS:
        for value in ("9" * 30, "-1", "1e400", "99999999999"):
            cases.append((f"?{name}={value[:12]}", {name: value}))
    for value in ("x" * 2000, "[]", "9" * 30, "%"):
        cases.append((f"texts={value[:12]}", {name: value for name in QUERY_TEXTS}))
    return cases


ADMIN_QUERIES = [
    ("?p= too large", {"p": "9" * 30}),
    ("?o= junk", {"o": "9" * 30 + ".-x"}),
    ("?q= long", {"q": "x" * 2000}),
    ("?pk__gt= too large", {"pk__gt": "9" * 30}),
    ("?_to_field= junk", {"_to_field": "password", "_popup": "1"}),
]


def answer_problem(method: str, path: str, response) -> str | None:
    """What is wrong with an answer: a 5xx anywhere; under the API prefixes an HTML page or
    an error outside the surface's shape (a HEAD answer has no body to shape)."""
    if response.status_code >= 500:
        return "server error"
    if not path.startswith(API_PREFIXES) or path.startswith("/api/docs/"):
        return None
    content_type = response.get("Content-Type", "")
    if "html" in content_type and not (300 <= response.status_code < 400):
        return "an HTML answer"
    if response.status_code < 400 or method == "HEAD":
        return None
    try:
        error = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        return "an error that is not JSON"
    if path.startswith("/api/") and not path.startswith(OPENAPI_PAGES):
        return None if isinstance(error, str) else "an error outside SpecArena's shape"
    if not isinstance(error, dict) or set(error) != {"code", "message", "fields"}:
        return "an error outside the JSON error shape"
    return None


def send(client: Client, method: str, path: str, query=None, body: Any = "", kind: str = ""):
    if isinstance(body, dict):
        return client.post(path, body)
    url = f"{path}?{urlencode(query)}" if query else path
    if method in ("GET", "HEAD"):
        return client.generic(method, url)
    return client.generic(method, url, body, content_type=kind)


# Refused by the parser or the body limit whoever sends them.
REFUSED_BEFORE_ANYTHING = {
    "JSON nested 60,000 deep",
    "every field 1e400",
    "a form with NUL",
    "an oversized body",
}
PROBED_METHODS = ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]
ROUTES = url_patterns()


@pytest.mark.parametrize("route,entry", ROUTES, ids=[route for route, _ in ROUTES])
def test_it_answers_every_route_without_a_5xx_or_an_html_error(world, settings, route, entry):
    real, junk = paths_for(route, entry, world)
    # Django leaves out the regexes' "^": the route that matched is the one under test.
    matched = resolve_path(real).route
    assert matched.replace("^", "") == route.replace("^", ""), f"{real} is not {route}"
    is_admin = route.startswith("admin/")
    bodies = hostile_bodies(route)
    if is_admin:  # the admin reads forms; its JSON fields have their own test below
        bodies = [case for case in bodies if case[2] != "application/json"]
    bodies_for_everyone = [case for case in bodies if case[0] in REFUSED_BEFORE_ANYTHING]
    failures = []
    for rank, persona in enumerate(personas_for(route)):
        deepest = rank < (2 if route.startswith("api/") else 1)
        settings.ARENA_AUTH = "standalone" if "standalone" in persona else "auth"
        client = client_for(persona, world)

        def check(method, path, label, **sent):
            response = send(client, method, path, **sent)
            problem = answer_problem(method, path, response)
            if problem:
                body = b"" if response.streaming else response.content[:160]
                failures.append(
                    f"{persona} {method} {path[:80]} [{label}] -> {response.status_code} "
                    f"{problem}: {body!r}"
                )
            return response

        accepted = []
        for method in PROBED_METHODS[:-1] if deepest else ["GET"] if is_admin else ["GET", "POST"]:
            probe = check(method, real, "plausible", body="{}", kind="application/json")
            if probe.status_code != 405:
                accepted.append(method)
        for path in junk if deepest else [] if is_admin else junk[:2]:
            check("GET", path, "junk in the path")
            if deepest:
                check("POST", path, "junk in the path", body="{}", kind="application/json")
        if "GET" in accepted and deepest:
            for label, query in ADMIN_QUERIES if is_admin else hostile_queries():
                check("GET", real, label, query=query)
        for method in (m for m in accepted if m in ("POST", "PUT", "PATCH")):
            for label, body, kind in bodies if deepest else bodies_for_everyone:
                if isinstance(body, dict) and method != "POST":
                    continue
                check(method, real, label, body=body, kind=kind)
        # Last, so the other shapes still find the real rows.
        check("DELETE", real, "plausible")
    assert not failures, f"{len(failures)} bad answers:\n" + "\n".join(failures[:40])


# --- every websocket route ---------------------------------------------------------------


def websocket_routes() -> list[str]:
    from config.routing import websocket_urlpatterns

    return [str(entry.pattern) for entry in websocket_urlpatterns]


HOSTILE_FRAMES = [
    {"text_data": DEEP_JSON},
    {"text_data": '{"a": '},
    {"text_data": '{"a": 1e400, "b": "\\u0000"}'},
    {"text_data": "a\x00b"},
    {"text_data": "x" * 300_000},
    {"bytes_data": b"\xff\xfe\x00"},
]


@pytest.mark.django_db(transaction=True)
def test_it_keeps_every_websocket_up_under_hostile_frames(world):
    from config.asgi import application

    cookies = {}
    for persona in ("player", "creator"):
        client = Client()
        client.force_login(world["accounts"][persona])
        cookies[persona] = client.cookies.output(header="", sep=";").strip().encode()

    async def visit(path: str, persona: str) -> str | None:
        headers = [(b"origin", b"http://127.0.0.1")]
        if persona in cookies:
            headers.append((b"cookie", cookies[persona]))
        if persona in world["authorization"]:
            headers.append((b"authorization", world["authorization"][persona].encode()))
        communicator = WebsocketCommunicator(application, path, headers=headers)
        try:
            connected, code = await communicator.connect(timeout=5)
            if not connected:
                return None if code == 4404 else f"refused with {code}"
            await communicator.receive_output(timeout=5)  # the first push
            for frame in HOSTILE_FRAMES:
                await communicator.send_to(**frame)
            await communicator.receive_nothing(timeout=0.2)
            if communicator.future.done():
                communicator.future.result()
            await communicator.disconnect(timeout=5)
        except Exception as error:  # noqa: BLE001 - any failure of the app is the finding
            return f"{type(error).__name__}: {error}"[:200]
        return None

    visits = []
    for route in websocket_routes():
        if not route:
            paths = ["/ws/nowhere/", "/ws/" + "x" * 3000]
        else:
            real, junk = paths_for(route, None, world)
            paths = [real, *junk]
        for path in paths:
            for persona in ["anonymous", "player", "creator", "bridge key", "arena session key"]:
                visits.append((path.replace("%00", "\x00"), persona))

    async def scenario() -> list[str]:
        # One event loop for every socket, as in a server process.
        found = []
        for path, persona in visits:
            problem = await visit(path, persona)
            if problem:
                found.append(f"{persona} {path[:80]}: {problem}")
        return found

    failures = async_to_sync(scenario)()
    assert not failures, "\n".join(failures[:40])


# --- every JSON field of the admin -------------------------------------------------------

HOSTILE_JSON_TEXT = [
    '{"a": 1e400}',
    '{"a": 99999999999999999999999}',
    '{"a": NaN}',
    '{"a": "\\u0000"}',
    '{"\\u0000": 1}',
    "[" * 5000 + "]" * 5000,
    "[" * 60_000 + "]" * 60_000,
]


def admin_form_urls() -> list[str]:
    """The add form of every admin, and the change form of a row of each where one exists."""
    urls = []
    for model in apps.get_models():
        if not admin.site.is_registered(model):
            continue
        name = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        urls.append(reverse(f"{name}_add"))
        row = model._default_manager.values_list("pk", flat=True).first()
        if row is not None:
            urls.append(reverse(f"{name}_change", args=[row]))
    return urls


def test_it_refuses_hostile_json_in_every_admin_json_field(world):
    client = Client(raise_request_exception=False)
    client.force_login(world["accounts"]["superuser"])
    checked, failures = 0, []
    for url in admin_form_urls():
        page = client.get(url)
        if page.status_code != 200 or "adminform" not in (page.context or {}):
            continue
        form = page.context["adminform"].form
        data = {name: form[name].value() for name in form.fields}
        data = {name: value for name, value in data.items() if value is not None}
        for name, field in form.fields.items():
            if not isinstance(field, forms.JSONField) or field.disabled:
                continue
            for text in HOSTILE_JSON_TEXT:
                checked += 1
                response = client.post(url, {**data, name: text})
                errors = response.context["adminform"].form.errors if response.context else {}
                if response.status_code != 200 or name not in errors:
                    failures.append(f"{url} {name}={text[:20]} -> {response.status_code}")
    assert checked >= 7 * 8, checked  # the challenge's JSON boxes at least
    assert not failures, "\n".join(failures[:40])
