from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_replace
from django.contrib import admin
from django.http import JsonResponse
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from core.errors import error_body


def health(request):
    return JsonResponse({"status": "ok"})


@csrf_exempt
def api_not_found(request, path: str = ""):
    # API clients get the JSON error shape for a path no route knows, not the HTML page.
    return JsonResponse(error_body(code="not_found", message="No such API path."), status=404)


# Swagger UI is served from our own static files (drf-spectacular-sidecar); its page keeps
# one inline style element, and the split view serves its start-up script as a file.
api_docs = csp_replace(
    {
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
    }
)(
    # A page, not an API: OPTIONS would render DRF's metadata through the page's template.
    SpectacularSwaggerSplitView.as_view(url_name="api-schema", http_method_names=["get", "head"])
)

# A dependency that is down answers 503 with Retry-After, anything else unhandled a 500.
handler500 = "core.outages.server_error_or_unavailable"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("console/api/", include("players.urls_console")),
    path("console/api/", include("players.teams.urls_console")),
    path("console/api/", include("challenges.urls_console")),
    path("console/api/", include("redblue.teams.urls_console")),
    path("console/api/", include("redblue.porting.urls_console")),
    path("console/api/", include("notifications.urls_console")),
    path("web/api/", include("players.urls_web")),
    path("web/api/", include("players.teams.urls_web")),
    path("web/api/", include("challenges.urls_web")),
    path("web/api/", include("redblue.teams.urls_web")),
    path("bridge/", include("challenges.urls_bridge")),
    path("bridge/", include("redblue.teams.urls_bridge")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", api_docs, name="api-docs"),
    path("api/v1/", include("redblue.arena.urls")),
    path("api/", include("redblue.arena.urls")),
    path("health", health),
    path("profile/", include("players.urls_pages")),
    path("teams/", include("players.teams.urls_pages")),
    path("notifications/", include("notifications.urls_pages")),
    path("arena/", include("redblue.arena.urls_pages")),
    path("", include("redblue.teams.urls_pages")),
    path("", include("challenges.urls_pages")),
    # Last, so it only catches what no route knows: the API prefixes answer a JSON 404
    # (under /api/ the arena's own urls answer in SpecArena's error shape).
    re_path(r"^(?:console/api|web/api|bridge)(?:/(?P<path>.*))?$", api_not_found),
]
