import pytest
from django.test import Client

from challenges.models import ChallengeCollection, CollectionItem
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

LIST = "/admin/challenges/challengecollection/"
ADD = "/admin/challenges/challengecollection/add/"


def admin_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def form_data(workspace, items=(), **overrides) -> dict:
    data = {
        "workspace": str(workspace.pk),
        "name": "Starter Pack",
        "slug": "starter-pack",
        "app_id": "",
        "description": "",
        "instructions_md": "",
        "is_public": "on",
        "scoring_strategy": "sum",
        "scoring_plugin_id": "",
        "scoring_entrypoint": "",
        "scoring_config": "{}",
        "theme": "{}",
        "items-TOTAL_FORMS": str(len(items)),
        "items-INITIAL_FORMS": "0",
        "items-MIN_NUM_FORMS": "0",
        "items-MAX_NUM_FORMS": "1000",
    }
    for index, (position, challenge) in enumerate(items):
        data[f"items-{index}-position"] = str(position)
        data[f"items-{index}-challenge"] = str(challenge.pk)
    data.update(overrides)
    return data


def test_it_creates_an_ordered_collection(creator, workspace):
    first = make_challenge(workspace=workspace, name="First")
    second = make_challenge(workspace=workspace, name="Second")

    response = admin_client(creator).post(ADD, form_data(workspace, [(2, first), (1, second)]))

    assert response.status_code == 302, response.content.decode()[:3000]
    collection = ChallengeCollection.objects.get()
    assert collection.created_by == creator
    ordered = list(collection.items.values_list("challenge__name", flat=True))
    assert ordered == ["Second", "First"]


def test_it_offers_and_accepts_only_the_creators_challenges(creator, workspace, other_workspace):
    make_challenge(workspace=workspace, name="Acme Vault")
    rival = make_challenge(workspace=other_workspace, name="Rival Fortress")
    client = admin_client(creator)

    page = client.get(ADD).content.decode()
    assert "Acme Vault" in page
    assert "Rival Fortress" not in page

    response = client.post(ADD, form_data(workspace, [(1, rival)]))
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert not ChallengeCollection.objects.exists()


def test_it_refuses_a_bad_theme_and_writes_nothing(creator, workspace):
    response = admin_client(creator).post(
        ADD, form_data(workspace, theme='{"accent": "red; background: url(x)"}')
    )

    assert response.status_code == 200
    assert "Theme &#x27;accent&#x27; must be a hex colour" in response.content.decode()
    assert not ChallengeCollection.objects.exists()


def test_it_hides_another_workspaces_collection(creator, outsider, workspace):
    admin_client(creator).post(ADD, form_data(workspace))
    collection = ChallengeCollection.objects.get()
    client = admin_client(outsider)

    assert "Starter Pack" not in client.get(LIST).content.decode()
    opened = client.get(f"{LIST}{collection.pk}/change/")
    assert opened.status_code in (302, 404)
    assert b"Starter Pack" not in opened.content


def test_it_lets_a_viewer_see_the_items_but_not_reorder_them(creator, viewer, workspace):
    challenge = make_challenge(workspace=workspace, name="Acme Vault")
    admin_client(creator).post(ADD, form_data(workspace, [(1, challenge)]))
    collection = ChallengeCollection.objects.get()
    item = CollectionItem.objects.get()
    position = item.position
    client = admin_client(viewer)

    page = client.get(f"{LIST}{collection.pk}/change/")
    assert page.status_code == 200
    assert b"Acme Vault" in page.content
    assert b'name="items-0-position"' not in page.content

    data = form_data(workspace, **{"items-INITIAL_FORMS": "1", "items-TOTAL_FORMS": "1"})
    data.update({"items-0-id": str(item.pk), "items-0-position": "9"})
    assert client.post(f"{LIST}{collection.pk}/change/", data).status_code == 403
    item.refresh_from_db()
    assert item.position == position


def test_it_reorders_and_removes_items_by_their_positions(creator, workspace):
    first = make_challenge(workspace=workspace, name="First")
    second = make_challenge(workspace=workspace, name="Second")
    third = make_challenge(workspace=workspace, name="Third")
    client = admin_client(creator)
    client.post(ADD, form_data(workspace, [(1, first), (2, second), (3, third)]))
    collection = ChallengeCollection.objects.get()
    items = {item.challenge_id: item for item in collection.items.all()}

    data = form_data(workspace, **{"items-INITIAL_FORMS": "3", "items-TOTAL_FORMS": "3"})
    for index, (challenge, position) in enumerate(((first, 5), (second, 1), (third, 2))):
        data[f"items-{index}-id"] = str(items[challenge.pk].pk)
        data[f"items-{index}-collection"] = str(collection.pk)
        data[f"items-{index}-challenge"] = str(challenge.pk)
        data[f"items-{index}-position"] = str(position)
    data["items-2-DELETE"] = "on"
    response = client.post(f"{LIST}{collection.pk}/change/", data)

    assert response.status_code == 302, response.content.decode()[:3000]
    ordered = list(collection.items.values_list("challenge__name", flat=True))
    assert ordered == ["Second", "First"]
    history = client.get(f"{LIST}{collection.pk}/history/").content.decode()
    assert "Deleted collection item" in history
