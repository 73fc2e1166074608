import gc
import os

from django.core.asgi import get_asgi_application

from config.startup import require_secret_key

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
require_secret_key()
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from config.going_away import WebsocketsGoAwayOnShutdown  # noqa: E402
from config.lanes import lanes_in_front_of  # noqa: E402
from config.mcp import McpInFrontOf  # noqa: E402
from config.routing import websocket_urlpatterns  # noqa: E402

# The MCP tools answer through Django itself (the REST call each stands for).
http_app = McpInFrontOf(lanes_in_front_of(django_asgi_app), rest_app=django_asgi_app)

application = ProtocolTypeRouter(
    {
        "http": http_app,
        "lifespan": http_app,
        "websocket": WebsocketsGoAwayOnShutdown(
            AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
        ),
    }
)

# What was loaded at start (Django, the apps, their modules) lives as long as the process:
# keep it out of the collector's scans, so a busy worker's pauses stay short.
gc.freeze()
