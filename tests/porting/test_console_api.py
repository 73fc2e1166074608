"""GET /console/api/export, POST /console/api/import and GET /console/api/export/schema:
owners and editors of the workspace only; a bad file is a 400 with every line, no rows."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from challenges.models import Challenge, Secret
from redblue.porting.schema import SCHEMA_FILE
from tests import factories
from tests.conftest import client_for
from tests.porting.test_import_errors import GOOD, rows

pytestmark = pytest.mark.django_db

EXPORT, IMPORT, SCHEMA = "/console/api/export", "/console/api/import", "/console/api/export/schema"


@pytest.fixture
def filled(workspace):
    Secret.objects.create(workspace=workspace, name="vault", value="SHOULD-NEVER-SHOW-1")
    factories.make_challenge(
        workspace=workspace,
        slug="acme-vault",
        name="Vault",
        success_pattern="{{secret}}",
        secret_ref="vault",
    )
    return workspace


def test_a_creator_exports_the_same_file_as_the_command(creator_api, filled):
    response = creator_api.get(EXPORT, {"workspace": filled.slug})

    assert response.status_code == 200
    assert response["Content-Type"] == "application/yaml; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="{filled.slug}.yaml"'
    out = StringIO()
    call_command("exportchallenges", workspace=filled.slug, stdout=out)
    assert response.content.decode() == out.getvalue()
    assert "SHOULD-NEVER-SHOW-1" not in response.content.decode()
    # A creator of one workspace may leave the workspace out.
    assert creator_api.get(EXPORT).content == response.content


def test_export_is_denied_to_everyone_else(filled, outsider_api, viewer_api, anon_api, player):
    assert outsider_api.get(EXPORT, {"workspace": filled.slug}).status_code == 404
    assert outsider_api.get(EXPORT, {"workspace": str(filled.id)}).status_code == 404
    # The outsider's own workspace is theirs to export, and holds nothing of Acme's.
    own = outsider_api.get(EXPORT)
    assert own.status_code == 200 and b"acme-vault" not in own.content
    # Viewers never see secret names, and the file lists them.
    denied = viewer_api.get(EXPORT, {"workspace": filled.slug})
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "permission_denied"
    assert client_for(player).get(EXPORT).status_code == 403
    assert client_for(player).get(EXPORT, {"workspace": filled.slug}).status_code == 404
    assert anon_api.get(EXPORT, {"workspace": filled.slug}).status_code == 401


def test_a_creator_imports_a_json_body_with_secret_values(creator_api, workspace):
    response = creator_api.post(
        IMPORT,
        {"workspace": workspace.slug, "document": GOOD, "secrets": {"vault": "given-9911"}},
        format="json",
    )

    assert response.status_code == 201, response.content
    assert response.json() == {
        "workspace": workspace.slug,
        "created": {
            "secrets": ["vault"],
            "challenges": ["imp-vault", "imp-magic"],
            "collections": ["imp-levels"],
            "red_blue_challenges": ["League"],
            "waves": [],
            "bounties": [],
        },
        "updated": {
            "secrets": [],
            "challenges": [],
            "collections": [],
            "red_blue_challenges": [],
            "waves": [],
            "bounties": [],
        },
        "secrets_generated": [],
    }
    assert Secret.objects.get(workspace=workspace, name="vault").value == "given-9911"
    assert "given-9911" not in response.content.decode()
    assert Challenge.objects.get(slug="imp-vault").created_by.email == "owner@acme.test"


def test_a_creator_imports_a_raw_yaml_body(creator_api, workspace):
    response = creator_api.generic(
        "POST",
        f"{IMPORT}?workspace={workspace.slug}",
        GOOD.encode(),
        content_type="application/yaml",
    )

    assert response.status_code == 201, response.content
    assert response.json()["secrets_generated"] == ["vault"]
    value = Secret.objects.get(workspace=workspace, name="vault").value
    assert value not in response.content.decode()
    assert rows() == {"challenges": 2, "collections": 1, "red_blue": 1, "secrets": 1}


def test_a_bad_file_is_a_400_with_lines_and_writes_nothing(creator_api, workspace):
    bad = GOOD.replace("^I have been PWNED$", "^(unclosed").replace(
        "  - imp-magic\n", "  - imp-magic\n  - imp-nowhere\n"
    )

    response = creator_api.post(IMPORT, {"document": bad}, format="json")

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["message"].startswith("The file was not imported (2 problems): line 13: ")
    assert error["fields"]["collections[0].challenges[2]"] == [
        "line 21: No challenge with the slug 'imp-nowhere' in this file or this workspace."
    ]
    assert error["fields"]["challenges[1].success_pattern"][0].startswith("line 13: ")
    assert rows() == {"challenges": 0, "collections": 0, "red_blue": 0, "secrets": 0}


def test_a_syntax_error_is_a_400_too(creator_api, workspace):
    response = creator_api.post(IMPORT, {"document": "version: 1\nsecrets: [a\n"}, format="json")

    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert list(fields) == ["(file)"]
    assert fields["(file)"][0].startswith("line 3: Not valid YAML")


def test_import_is_denied_to_everyone_else(workspace, outsider_api, viewer_api, anon_api, player):
    body = {"workspace": workspace.slug, "document": GOOD}

    assert outsider_api.post(IMPORT, body, format="json").status_code == 404
    assert viewer_api.post(IMPORT, body, format="json").status_code == 403
    assert client_for(player).post(IMPORT, body, format="json").status_code == 404
    assert client_for(player).post(IMPORT, {"document": GOOD}, format="json").status_code == 403
    assert anon_api.post(IMPORT, body, format="json").status_code == 401
    assert rows() == {"challenges": 0, "collections": 0, "red_blue": 0, "secrets": 0}


def test_an_outsider_import_cannot_reach_into_another_workspace(outsider_api, filled):
    # Their own workspace, but a slug Acme holds: refused, and Acme's challenge untouched.
    document = GOOD.replace("slug: imp-vault", "slug: acme-vault")

    response = outsider_api.post(IMPORT, {"document": document}, format="json")

    assert response.status_code == 400
    assert (
        "belongs to another workspace"
        in response.json()["error"]["fields"]["challenges[0].slug"][0]
    )
    assert Challenge.objects.get(slug="acme-vault").workspace == filled


def test_it_refuses_unknown_body_fields(creator_api, workspace):
    response = creator_api.post(IMPORT, {"document": GOOD, "values": {}}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"values": ["Unknown field."]}


def test_the_schema_is_public_and_is_the_committed_file(anon_api):
    response = anon_api.get(SCHEMA)

    assert response.status_code == 200
    assert response["Content-Type"] == "application/schema+json; charset=utf-8"
    assert json.loads(response.content) == json.loads(SCHEMA_FILE.read_text())


def test_the_endpoints_are_in_the_openapi_schema(anon_api):
    paths = anon_api.get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]

    assert "application/yaml" in paths[EXPORT]["get"]["responses"]["200"]["content"]
    assert set(paths[IMPORT]["post"]["requestBody"]["content"]) >= {
        "application/json",
        "application/yaml",
    }
    assert "201" in paths[IMPORT]["post"]["responses"]
    assert SCHEMA in paths
