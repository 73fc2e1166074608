"""Workspace scoping for every app's admin: what a creator may see and change follows
their membership role in each workspace (owner, editor, viewer), not Django's per-model
permissions. The base classes here (`WorkspaceScopedAdmin`, `WorkspaceScopedInline`) and the
role helpers are shared by the admins of players, challenges, notifications and red/blue;
superusers see and change everything.
"""

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse

from core.errors import ApplicationError
from core.parsers import CheckedJSONDecoder
from players.models import Membership, Workspace
from players.selectors import workspaces_for_user

WRITE_ROLES = frozenset({Membership.Role.OWNER, Membership.Role.EDITOR})


def workspace_roles(request: HttpRequest) -> dict[Any, str]:
    """{workspace_id: role} for the requesting user, read once per request."""
    roles = getattr(request, "_workspace_roles", None)
    if roles is None:
        roles = dict(
            Membership.objects.filter(user_id=request.user.pk).values_list("workspace_id", "role")
        )
        request._workspace_roles = roles
    return roles


def role_in(request: HttpRequest, workspace_id: Any) -> str | None:
    if request.user.is_superuser:
        return Membership.Role.OWNER
    return workspace_roles(request).get(workspace_id)


def can_write_any(request: HttpRequest) -> bool:
    if request.user.is_superuser:
        return True
    return any(role in WRITE_ROLES for role in workspace_roles(request).values())


def _has_workspace_field(model: type[models.Model]) -> bool:
    try:
        field = model._meta.get_field("workspace")
    except Exception:  # noqa: BLE001 - FieldDoesNotExist and friends
        return False
    return field.is_relation and field.related_model is Workspace


def limit_foreign_key(request: HttpRequest, db_field, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Offer only the creator's writable workspaces, and only rows of their workspaces."""
    if request.user.is_superuser:
        return kwargs
    if db_field.related_model is Workspace:
        writable = workspaces_for_user(user=request.user, writable=True)
        kwargs["queryset"] = writable
        ids = list(writable.values_list("id", flat=True)[:2])
        if len(ids) == 1:
            kwargs["initial"] = ids[0]
    elif _has_workspace_field(db_field.related_model):
        kwargs["queryset"] = db_field.related_model._default_manager.filter(
            workspace__in=workspaces_for_user(user=request.user, writable=True)
        )
    return kwargs


# Fields whose values are secrets, hashes of secrets or encrypted secrets, besides those
# that say so themselves (core.encryption.EncryptedTextField has `holds_secret`).
SECRET_FIELD_NAMES = frozenset({"password", "key_hash", "secret_encrypted", "secret", "token"})


def field_holds_secret(field) -> bool:
    return getattr(field, "holds_secret", False) or (
        not field.is_relation and field.name in SECRET_FIELD_NAMES
    )


def lookup_touches_secret(model: type[models.Model], lookup: str) -> bool:
    """Whether a query-string lookup (`workspace__secrets__value__startswith`) reaches a
    secret field on its way, through any relation."""
    for part in lookup.split(LOOKUP_SEP):
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            return False
        if field_holds_secret(field):
            return True
        if not field.is_relation or field.related_model is None:
            return False
        model = field.related_model
    return False


class SecretLookupGuard:
    """Refuse changelist filters on secret values: a filter's result count answers yes or
    no to a guess, which recovers a secret one character at a time. Django answers a
    refused lookup with 400, the same whether the guess was right or wrong."""

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        if lookup_touches_secret(self.model, lookup):
            return False
        return super().lookup_allowed(lookup, value, request)


class WorkspaceScopedAdmin(SecretLookupGuard, admin.ModelAdmin):
    """Scope a model admin to the rows of the user's workspaces.

    `workspace_field` names the model's ForeignKey to Workspace (None for Workspace
    itself). `read_only` admins allow nobody to add or change rows (they are written by
    services elsewhere).
    """

    workspace_field: str | None = "workspace"
    read_only = False
    # JSON typed into the admin gets the API's limits (no NUL, no deep nesting): a 500 else.
    formfield_overrides = {models.JSONField: {"decoder": CheckedJSONDecoder}}

    def workspace_id_of(self, obj: models.Model) -> Any:
        if self.workspace_field is None:
            return obj.pk
        return getattr(obj, f"{self.workspace_field}_id")

    def get_queryset(self, request: HttpRequest):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        lookup = f"{self.workspace_field}__in" if self.workspace_field else "pk__in"
        return queryset.filter(**{lookup: workspaces_for_user(user=request.user)})

    def has_module_permission(self, request: HttpRequest) -> bool:
        user = request.user
        return (
            user.is_active
            and user.is_staff
            and (user.is_superuser or bool(workspace_roles(request)))
        )

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        if obj is None:
            return self.has_module_permission(request)
        return role_in(request, self.workspace_id_of(obj)) is not None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not self.read_only and can_write_any(request)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        if self.read_only:
            return False
        if obj is None:
            return can_write_any(request)
        return role_in(request, self.workspace_id_of(obj)) in WRITE_ROLES

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self.has_change_permission(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        # Moving a row to another workspace would strand what refers to it by name.
        if obj is not None and self.workspace_field and self.workspace_field not in readonly:
            readonly.append(self.workspace_field)
        return readonly

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        return super().formfield_for_foreignkey(
            db_field, request, **limit_foreign_key(request, db_field, kwargs)
        )

    # Forms check what they can; a service may still refuse (a lost race on a unique
    # name, a secret still in use). Its transaction is rolled back and the reason shown.
    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def delete_view(self, request, object_id, extra_context=None):
        try:
            return super().delete_view(request, object_id, extra_context)
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            opts = self.opts
            return HttpResponseRedirect(
                reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[object_id])
            )


class WorkspaceScopedInline(admin.TabularInline):
    """An inline whose rights follow the parent row's workspace."""

    def _parent_role(self, request: HttpRequest, obj) -> str | None:
        if obj is None:
            return Membership.Role.EDITOR if can_write_any(request) else None
        workspace_id = obj.pk if isinstance(obj, Workspace) else obj.workspace_id
        return role_in(request, workspace_id)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        if request.user.is_superuser:
            return True
        # Django asks without a parent too (to build the inline's queryset), so any
        # membership will do there; the parent itself was already scoped.
        if obj is None:
            return bool(workspace_roles(request))
        return self._parent_role(request, obj) is not None

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._parent_role(request, obj) in WRITE_ROLES

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._parent_role(request, obj) in WRITE_ROLES

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._parent_role(request, obj) in WRITE_ROLES

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        return super().formfield_for_foreignkey(
            db_field, request, **limit_foreign_key(request, db_field, kwargs)
        )
