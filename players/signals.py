"""Signals other apps listen to (players imports none of them)."""

from django.dispatch import Signal

# Sent inside the transaction that changed the shown name of some players, with
# `end_user_ids` (a list, or a values_list query, of EndUser ids): boards that show them
# are drawn again.
end_users_renamed = Signal()
