"""The lane's own reads, in autocommit on the event loop's pool: the Dify user a call names
and a delivery's stored answer. Its write is the recorder's (challenges/services/recording.py)."""

from typing import Any

from challenges.models import BridgeDelivery
from core.aio_clients import pg_fetch
from players.models import EndUser


async def player_row(*, workspace_id: Any, external_id: str) -> tuple | None:
    """(identity id, linked-to id, player id, player's external id, player's account id) of
    a Dify user already known in the workspace; the player is the account it is linked to."""
    end_user_t = EndUser._meta.db_table
    rows = await pg_fetch(
        f"SELECT identity.id, identity.linked_to_id, player.id, player.external_id, "  # noqa: S608
        f"player.account_id FROM {end_user_t} identity "
        f"JOIN {end_user_t} player ON player.id = coalesce(identity.linked_to_id, identity.id) "
        "WHERE identity.workspace_id = %s AND identity.external_id = %s",
        (workspace_id, external_id),
    )
    return rows[0] if rows else None


async def stored_response(*, workspace_id: Any, endpoint: str, workflow_run_id: str) -> dict | None:
    rows = await pg_fetch(
        f"SELECT response FROM {BridgeDelivery._meta.db_table} "  # noqa: S608
        "WHERE workspace_id = %s AND endpoint = %s AND workflow_run_id = %s",
        (workspace_id, endpoint, workflow_run_id),
    )
    return rows[0][0] if rows else None
