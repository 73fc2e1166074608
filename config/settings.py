"""Every knob comes from the environment; with none set, the embedded default runs.

Embedded default: SQLite file, in-memory channel layer, eager Celery, local-memory
cache, console email, offline target model. Production: DATABASE_URL, REDIS_URL,
OPENAI_BASE_URL/OPENAI_API_KEY, EMAIL_URL. README.md lists every variable.
"""

import re
from pathlib import Path
from urllib.parse import urlparse

import environ
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from redis.backoff import NoBackoff
from redis.retry import Retry

from core.client_ip import trusted_proxy_networks

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=False)

_DEV_SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
# Left empty when unset outside DEBUG: commands that sign nothing (makemigrations, check)
# still run, Django refuses any use of an empty key, and the serving and worker entry
# points refuse to start without one (config/startup.py). The test runner's key and other
# test-only overrides live in config/test_settings.py, so no variable switches them on here.
SECRET_KEY = env.str("SECRET_KEY", default=_DEV_SECRET_KEY if DEBUG else "")

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000")

INSTALLED_APPS = [
    "daphne",
    "config.admin_apps.PlatformAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "django_celery_beat",
    "allauth",
    "allauth.account",
    "csp",
    "players",
    "judging",
    "notifications",
    "challenges",
    "redblue",
]

MIDDLEWARE = [
    "core.middleware.request_id",
    "core.middleware.ApiErrors",
    # Reads that tolerate lag on a replica (a no-op without DATABASE_REPLICA_URLS).
    "config.replicas.lag_tolerant_reads",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "core.middleware.refuse_nul_characters",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"
SITE_ID = 1

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "csp.context_processors.nonce",
            ],
            "libraries": {"images": "core.images"},
        },
    },
]

# --- Database -------------------------------------------------------------------
DATABASES = {"default": env.db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend, refusing at once while PostgreSQL is known to be down instead of
    # queueing every request for the pool's timeout (core/postgresql, docs/outages.md).
    DATABASES["default"]["ENGINE"] = "core.postgresql"
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=0)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Under ASGI each request runs its sync code on a new thread, so persistent per-thread
    # connections pile up; a psycopg pool per process reuses them (DB_POOL_SIZE=0: none).
    if DB_POOL_SIZE := env.int("DB_POOL_SIZE", default=8):
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": min(2, DB_POOL_SIZE),
            "max_size": DB_POOL_SIZE,
            "timeout": env.float("DB_POOL_TIMEOUT", default=10.0),
        }
else:
    # SQLite waits for a lock instead of failing at once under concurrent writers.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The raw lanes (core/fastlane.py) keep their own asyncio psycopg pool per worker process,
# used only on PostgreSQL with Redis; LANES=false sends every request through Django.
LANES = env.bool("LANES", default=True)
LANE_DB_POOL_SIZE = env.int("LANE_DB_POOL_SIZE", default=8)

# --- Redis: cache, channel layer, Celery broker -----------------------------------
REDIS_URL = env.str("REDIS_URL", default="")

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default="phc"),
            # A Redis that is down fails a call at once (one retry, for a connection Redis
            # closed) instead of redis-py's ten retries with backoff (docs/outages.md).
            "OPTIONS": {
                "socket_connect_timeout": 2,
                "socket_timeout": 2,
                "retry": Retry(NoBackoff(), 1),
            },
        }
    }
    # channels_redis waits for messages with a 5 s BZPOPMIN; redis-py 8 made 5 s the default
    # socket timeout, so an idle socket's read timed out and the consumer died
    # (django/channels_redis#422, redis/redis-py#4091): the read timeout stays above that
    # wait. The pool (one per worker process) queues a caller when it is full instead of
    # refusing it (config/channel_layer.py).
    CHANNEL_LAYER_POOL_SIZE = env.int("CHANNEL_LAYER_POOL_SIZE", default=100)
    if CHANNEL_LAYER_POOL_SIZE < 1:
        raise ImproperlyConfigured("CHANNEL_LAYER_POOL_SIZE must be at least 1")
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "config.channel_layer.WaitingRedisChannelLayer",
            "CONFIG": {
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": 15,
                        "socket_connect_timeout": 5,
                        "socket_keepalive": True,
                        "max_connections": CHANNEL_LAYER_POOL_SIZE,
                        "timeout": 5,  # seconds a caller waits for a free connection
                    }
                ],
                "prefix": env.str("CHANNELS_PREFIX", default="phc-asgi"),
            },
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Read replicas (config/replicas.py) ----------------------------------------------
# Comma-separated postgres:// URLs of streaming replicas for reads that tolerate lag;
# empty: every query on DATABASE_URL.
DATABASE_REPLICA_URLS = env.list("DATABASE_REPLICA_URLS", default=[])
# How long a client that wrote reads only from the primary, and how long a replica that
# did not answer is left alone before it is probed again.
DATABASE_REPLICA_PIN_SECONDS = env.float("DATABASE_REPLICA_PIN_SECONDS", default=5.0)
DATABASE_REPLICA_COOLDOWN_SECONDS = env.float("DATABASE_REPLICA_COOLDOWN_SECONDS", default=5.0)
if DATABASE_REPLICA_URLS:
    if DATABASES["default"]["ENGINE"] != "core.postgresql" or not REDIS_URL:
        raise ImproperlyConfigured(
            "DATABASE_REPLICA_URLS needs a postgres:// DATABASE_URL and REDIS_URL (the pins "
            "that let a player read their own writes live in Redis)."
        )
    for _number, _url in enumerate(DATABASE_REPLICA_URLS):
        _replica = env.db_url_config(_url)
        # Django's own backend: a replica that is down must not count as PostgreSQL down.
        _replica["ENGINE"] = "django.db.backends.postgresql"
        _replica["TEST"] = {"MIRROR": "default"}
        if DB_POOL_SIZE:
            # A short wait and a checked connection: a replica that went away costs a read
            # at most 2 s before it rests and reads go to the primary.
            _replica["CONN_MAX_AGE"] = 0
            _replica["CONN_HEALTH_CHECKS"] = True  # the pool checks a connection it lends
            _replica.setdefault("OPTIONS", {})["pool"] = {
                "min_size": 1,
                "max_size": DB_POOL_SIZE,
                "timeout": 2.0,
            }
        DATABASES[f"replica_{_number}"] = _replica
    DATABASE_ROUTERS = ["config.replicas.ReplicaRouter"]

CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL or "memory://")
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not REDIS_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
# The worker rides out a broker outage and reconnects by itself, however long it lasts;
# a task still running when the connection drops finishes (its outcome is in PostgreSQL,
# the sweeper covers a message the broker lost) rather than being cancelled half-way.
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# A hung Redis must not hold the worker past SIGTERM: each broker call gives up after 2 s
# (kombu's blocking pop asks for 1 s at a time, so a live Redis always answers sooner).
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_timeout": 2, "socket_connect_timeout": 2}
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_QUEUE", default="phc")
# django-celery-beat's, kept alive while PostgreSQL is away (config/beat.py).
CELERY_BEAT_SCHEDULER = "config.beat:DatabaseScheduler"
CELERY_TIMEZONE = "UTC"

# --- Notifications (events, emails, webhooks) --------------------------------------
# Webhook retries: base·2^n seconds with jitter, capped, for at least a day in all.
NOTIFICATIONS_WEBHOOK_BACKOFF_SECONDS = env.float(
    "NOTIFICATIONS_WEBHOOK_BACKOFF_SECONDS", default=30
)
NOTIFICATIONS_WEBHOOK_BACKOFF_MAX_SECONDS = env.float(
    "NOTIFICATIONS_WEBHOOK_BACKOFF_MAX_SECONDS", default=3600
)
NOTIFICATIONS_WEBHOOK_RETRY_FOR_SECONDS = env.int(
    "NOTIFICATIONS_WEBHOOK_RETRY_FOR_SECONDS", default=2 * 24 * 3600
)
NOTIFICATIONS_WEBHOOK_TIMEOUT_SECONDS = env.float(
    "NOTIFICATIONS_WEBHOOK_TIMEOUT_SECONDS", default=10
)
# The sweeper (every 10 s) re-queues events and deliveries whose task has been lost for
# this long: what a fault drops is sent again within 30 s of being due (docs/outages.md).
NOTIFICATIONS_SWEEP_GRACE_SECONDS = env.int("NOTIFICATIONS_SWEEP_GRACE_SECONDS", default=10)
NOTIFICATIONS_DELIVERY_LOG_DAYS = env.int("NOTIFICATIONS_DELIVERY_LOG_DAYS", default=30)

# --- Auth -------------------------------------------------------------------------
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
    # Not a rule: Django calls it whenever a password is set and saved (pages, admin,
    # commands, services), which is where API tokens are revoked.
    {"NAME": "players.authentication.RevokeApiTokensOnPasswordChange"},
]
# Bearer tokens from the login APIs stop working this many days after they are issued.
API_TOKEN_TTL_DAYS = env.int("API_TOKEN_TTL_DAYS", default=30)
LOGIN_REDIRECT_URL = "/"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
# Outside DEBUG an address must be confirmed before its account logs in, which is also what
# lets sign-up answer alike for new and taken addresses without breaking the API contract.
ACCOUNT_EMAIL_VERIFICATION = env.str(
    "ACCOUNT_EMAIL_VERIFICATION", default="optional" if DEBUG else "mandatory"
)
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_USER_MODEL_USERNAME_FIELD = "username"
ACCOUNT_LOGIN_BY_CODE_ENABLED = True
ACCOUNT_SIGNUP_FORM_CLASS = "players.forms.SignupDetailsForm"
ACCOUNT_ADAPTER = "players.adapter.AccountAdapter"
# Login codes and password resets answer alike whether or not an address has an account,
# and so does sign-up under mandatory verification; the owner of a taken address gets a
# mail instead (docs/accounts.md).
ACCOUNT_PREVENT_ENUMERATION = env.bool("ACCOUNT_PREVENT_ENUMERATION", default=True)

# --- Email ------------------------------------------------------------------------
EMAIL_URL = env.str("EMAIL_URL", default="")
if EMAIL_URL:
    vars().update(env.email_url("EMAIL_URL"))
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="challenges@localhost")

# --- API --------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "players.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_PAGINATION_CLASS": "core.api.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "core.api.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # Refuses too-deep nesting, NUL characters and NaN with a 400 (core/parsers.py).
    "DEFAULT_PARSER_CLASSES": ["core.parsers.JSONParser"],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # `?format=csv` is ours (attempt export), not DRF's renderer switch.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Prompt Hacking Challenges API",
    "DESCRIPTION": "Console (creators), web (players) and bridge (Dify) APIs.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI from our own static files (drf-spectacular-sidecar): /api/docs/ works
    # offline and needs no CDN in the Content-Security-Policy.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "ChallengeScoringStrategyEnum": "challenges.models.Challenge.Strategy",
        "CollectionScoringStrategyEnum": "challenges.models.ChallengeCollection.Strategy",
        "TeamPairingStatusEnum": "redblue.models.TeamPairing.Status",
        "TeamSubmissionStatusEnum": "redblue.models.TeamSubmission.Status",
        "ArenaSessionStatusEnum": "redblue.models.ArenaSession.Status",
        "WebhookDeliveryStatusEnum": "notifications.models.WebhookDelivery.Status",
    },
}
# Bodies larger than this are refused with 413 before anything is parsed.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("MAX_REQUEST_BYTES", default=256 * 1024)

# --- Product knobs ----------------------------------------------------------------
LEADERBOARD_DEFAULT_LIMIT = 10
LEADERBOARD_MAX_LIMIT = 100
# A live board is redrawn at most once per this many seconds per process, however many
# writes change it meanwhile (challenges/board_refresh.py).
BOARD_REFRESH_SECONDS = env.float("BOARD_REFRESH_SECONDS", default=0.2)
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="")
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
# LLM judge and plugin sandbox; docs/judging.md explains each knob.
JUDGE_DEFAULT_MODEL = env.str("JUDGE_DEFAULT_MODEL", default="openai/gpt-4o-mini")
JUDGE_TIMEOUT_SECONDS = env.float("JUDGE_TIMEOUT_SECONDS", default=20.0)
JUDGE_MAX_RETRIES = env.int("JUDGE_MAX_RETRIES", default=1)
PLUGIN_TIMEOUT_SECONDS = env.float("PLUGIN_TIMEOUT_SECONDS", default=5.0)
PLUGIN_MEMORY_LIMIT_MB = env.int("PLUGIN_MEMORY_LIMIT_MB", default=256)
PLUGIN_MAX_CONCURRENT = env.int("PLUGIN_MAX_CONCURRENT", default=4)
PLUGIN_MAX_PROCESSES = env.int("PLUGIN_MAX_PROCESSES", default=8)
PLUGIN_TMP_LIMIT_MB = env.int("PLUGIN_TMP_LIMIT_MB", default=16)
if PLUGIN_MAX_PROCESSES < 1 or PLUGIN_TMP_LIMIT_MB < 1 or PLUGIN_MEMORY_LIMIT_MB < 16:
    raise ImproperlyConfigured(
        "PLUGIN_MAX_PROCESSES and PLUGIN_TMP_LIMIT_MB must be at least 1, "
        "PLUGIN_MEMORY_LIMIT_MB at least 16."
    )
if not (0 <= JUDGE_MAX_RETRIES <= 5 and JUDGE_TIMEOUT_SECONDS > 0 and PLUGIN_TIMEOUT_SECONDS > 0):
    raise ImproperlyConfigured("Judge and plugin timeouts must be positive, retries 0 to 5.")
TARGET_TIMEOUT_SECONDS = env.float("TARGET_TIMEOUT_SECONDS", default=30.0)
TARGET_MAX_RETRIES = env.int("TARGET_MAX_RETRIES", default=1)
# Hosts (name or name:port) that creator-set URLs may reach although internal (core/egress.py).
EGRESS_ALLOW_HOSTS = env.list("EGRESS_ALLOW_HOSTS", default=[])
PLAY_IP_RATE_LIMIT = env.str("PLAY_IP_RATE_LIMIT", default="120/m")
LOGIN_RATE_LIMIT = env.str("LOGIN_RATE_LIMIT", default="10/m")
# Appeals one player may file (SPEC §10), across the workspace's challenges.
APPEAL_RATE_LIMIT = env.str("APPEAL_RATE_LIMIT", default="5/h")
# Per account: tries of a team invite code (players/teams/).
TEAM_JOIN_RATE_LIMIT = env.str("TEAM_JOIN_RATE_LIMIT", default="10/m")
# Per bridge key; "0/m" turns the limit off.
BRIDGE_RATE_LIMIT = env.str("BRIDGE_RATE_LIMIT", default="1200/m")
# Encrypts the copy of each bridge key kept for Standard Webhooks signatures; empty means
# derived from SECRET_KEY (rotating it then disables signed calls until keys are re-issued).
BRIDGE_ENCRYPTION_KEY = env.str("BRIDGE_ENCRYPTION_KEY", default="")
# Secret values at rest (core.encryption): comma-separated, the first encrypts, all decrypt;
# empty means derived from SECRET_KEY. Rotate: new key first, `manage.py rotatesecretkeys`.
SECRET_ENCRYPTION_KEYS = env.list("SECRET_ENCRYPTION_KEYS", default=[])

# --- Arena (SpecArena protocol, redblue/arena/) -------------------------------------
# "auth": Ed25519-signed joins and HMAC session keys; "standalone": identity from `from`.
ARENA_AUTH = env.str("ARENA_AUTH", default="standalone" if DEBUG else "auth")
if ARENA_AUTH not in ("auth", "standalone"):
    raise ImproperlyConfigured("ARENA_AUTH must be 'auth' or 'standalone'.")
# Keys the session-key HMAC; empty means derived from SECRET_KEY.
ARENA_SESSION_SECRET = env.str("ARENA_SESSION_SECRET", default="")
ARENA_STALE_SESSION_MINUTES = env.int("ARENA_STALE_SESSION_MINUTES", default=10)
ARENA_SCORING_STRATEGIES = env.list(
    "ARENA_SCORING_STRATEGIES", default=["average", "win-rate", "red-team", "consecutive"]
)
ARENA_GLOBAL_STRATEGY = env.str("ARENA_GLOBAL_STRATEGY", default="global-average")
ARENA_SSE_PING_SECONDS = env.float("ARENA_SSE_PING_SECONDS", default=30.0)

# --- I18N, static -----------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# --- Security ---------------------------------------------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_SECURE = not DEBUG and env.bool("SECURE_COOKIES", default=True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# With DEBUG off the site is HTTPS-only unless a variable turns a piece off explicitly.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
# Proxies whose X-Forwarded-For is believed (IPs or CIDRs); rate limits key on the client
# address read through them (core/client_ip.py). Empty: the TCP peer is the client.
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])
try:
    trusted_proxy_networks(TRUSTED_PROXIES)
except ValueError as error:
    raise ImproperlyConfigured(f"TRUSTED_PROXIES: {error}") from None

# Content-Security-Policy (django-csp): our scripts and styles by file or nonce only, no
# inline script or handler. Remote images only from MARKDOWN_IMAGE_HOSTS (host names,
# comma-separated, https): instruction images elsewhere are dropped by the sanitiser, and
# avatars and theme logos elsewhere are not shown (README).
MARKDOWN_IMAGE_HOSTS = env.list("MARKDOWN_IMAGE_HOSTS", default=[])
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST_NAME = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*$")
MARKDOWN_IMAGE_HOSTS = [host.strip().lower() for host in MARKDOWN_IMAGE_HOSTS if host.strip()]
if bad_hosts := [host for host in MARKDOWN_IMAGE_HOSTS if not _HOST_NAME.match(host)]:
    raise ImproperlyConfigured(
        f"MARKDOWN_IMAGE_HOSTS takes host names such as images.example.com, not {bad_hosts}."
    )
_site = urlparse(SITE_URL)
_site_websockets = f"{'wss' if _site.scheme == 'https' else 'ws'}://{_site.netloc}"
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:", *(f"https://{host}" for host in MARKDOWN_IMAGE_HOSTS)],
        # 'self' covers same-origin websockets in current browsers; the site's own ws(s)
        # origin is listed for those that do not.
        "connect-src": [SELF, _site_websockets] if _site.netloc else [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "core.middleware.RequestIdFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"}
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # The MCP SDK logs each stateless request's end at INFO: Django logs the call itself.
        "mcp": {"level": "WARNING"},
        # Django's own DEBUG-only console handler would print every request a second time.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
    },
}
