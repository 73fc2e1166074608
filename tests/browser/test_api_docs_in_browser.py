"""/api/docs/ renders Swagger UI from our own static files, with the internet cut off."""

import pytest

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_it_lists_the_api_operations_offline(live_server, page):
    refused = []
    page.on("requestfailed", lambda request: refused.append(request.url))

    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".opblock-summary-path", timeout=20_000)

    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/web/api/challenges" in path for path in paths)
    assert any("/console/api/challenges" in path for path in paths)
    assert page.locator(".opblock").count() > 20
    assert refused == []
