from django.contrib import admin
from django.http import JsonResponse
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView


def health(request):
    return JsonResponse({"status": "ok"})


urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("console/api/", include("players.urls_console")),
    path("console/api/", include("challenges.urls_console")),
    path("web/api/", include("players.urls_web")),
    path("web/api/", include("challenges.urls_web")),
    path("bridge/", include("challenges.urls_bridge")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its start-up script as a file, not an inline <script>.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("health", health),
    path("profile/", include("players.urls_pages")),
    path("", include("challenges.urls_pages")),
]
