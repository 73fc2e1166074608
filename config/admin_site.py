"""The admin site: its index is the creator dashboard (SPEC §5 Pages), with Django's app
list below it."""

from django.contrib import admin

from challenges.selectors.dashboard import creator_dashboard


class PlatformAdminSite(admin.AdminSite):
    index_template = "admin/dashboard.html"

    def index(self, request, extra_context=None):
        context = {"dashboard": creator_dashboard(user=request.user), **(extra_context or {})}
        return super().index(request, extra_context=context)
