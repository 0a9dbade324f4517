"""Settings, read from environment variables; `.env.example` lists each with its default."""

from __future__ import annotations

import os
import secrets
import sys
from datetime import timedelta
from pathlib import Path

from zeromemory.core.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent


DATA_DIR = Path(env_str("ZM_DATA_DIR", str(BASE_DIR / "var"))).resolve()
TESTING = "pytest" in sys.modules or env_bool("ZM_TESTING", False)


def _secret_key() -> str:
    """ZM_SECRET_KEY, or a key generated once per installation and kept under the data dir."""
    configured = env_str("ZM_SECRET_KEY")
    if configured:
        return configured
    key_file = DATA_DIR / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    try:
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process wrote it first
        return key_file.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(key)
    return key


SECRET_KEY = _secret_key()
DEBUG = env_bool("ZM_DEBUG", False)
ALLOWED_HOSTS = env_list("ZM_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
if TESTING:
    ALLOWED_HOSTS.append("testserver")  # the host name of Django's test client
CSRF_TRUSTED_ORIGINS = env_list("ZM_CSRF_TRUSTED_ORIGINS", "")

# Production over HTTPS: secure cookies, HSTS and a redirect of plain HTTP to HTTPS. Health,
# readiness and metrics stay reachable over plain HTTP for probes on the private network.
SECURE = env_bool("ZM_SECURE", False)
SESSION_COOKIE_SECURE = SECURE
CSRF_COOKIE_SECURE = SECURE
SECURE_SSL_REDIRECT = SECURE
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("ZM_HSTS_SECONDS", 31_536_000) if SECURE else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("ZM_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = SECURE_HSTS_INCLUDE_SUBDOMAINS
# Behind a proxy that terminates TLS: trust its X-Forwarded-Proto header to tell HTTPS requests.
# Only with a proxy that sets (or strips) this header on every request it forwards.
if env_bool("ZM_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "modeltranslation",  # before the admin, so kind labels are edited per language there
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "django_q",
    "axes",
    "zeromemory",
    "oauth2_provider",
    "scopes",
    "scopes.oauth",
    "memories",
    "dashboard",
]

MIDDLEWARE = [
    # First: every request counts as interactive while it runs (bulk work gives way to it).
    "zeromemory.core.foreground.ForegroundMiddleware",
    "zeromemory.core.metrics.RequestMetricsMiddleware",
    # A known bearer's model pass started on its text before the checks (memories.api.early_pass).
    "memories.api.early_pass.EarlyPassMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # With ZM_DATABASE_REPLICA_URLS: marks read requests for the replica router, notes writes.
    "zeromemory.core.read_requests.ReadRoutingMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # The per-user rate of the API on the pages too (the API and MCP count their own calls).
    "dashboard.middleware.RateLimitMiddleware",
    # Near the end, so it sees the view's exception first: a lost database answers 503, not 500.
    "zeromemory.core.outage.DatabaseOutageMiddleware",
    # Last, as django-axes asks: it answers a locked-out sign-in.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "zeromemory.urls"
ASGI_APPLICATION = "zeromemory.asgi.application"
WSGI_APPLICATION = "zeromemory.wsgi.application"

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
                "django.template.context_processors.i18n",
            ],
        },
    },
]

# Database: DATABASE_URL when given, otherwise the embedded PostgreSQL under ZM_DATA_DIR.
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    import dj_database_url

    DATABASES = {"default": dj_database_url.parse(DATABASE_URL)}
    EMBEDDED_DATABASE = False
else:
    from zeromemory import embedded_db

    DATABASES = {
        "default": embedded_db.django_database_settings(embedded_db.ensure_running(DATA_DIR))
    }
    EMBEDDED_DATABASE = True
# Django's backend with a health check that needs no round trip on a quiet connection
# (zeromemory.core.postgres).
DATABASES["default"]["ENGINE"] = "zeromemory.core.postgres"
# Each web thread and worker keeps its connection (checked before reuse after an error or
# an outage), so a request does not pay for starting a PostgreSQL backend; 0 closes it after
# every request.
DATABASES["default"]["CONN_MAX_AGE"] = env_int("ZM_DB_CONN_MAX_AGE", 600, minimum=0)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Behind PgBouncer in transaction pooling, a server-side cursor (QuerySet.iterator) could be
# declared in one transaction and fetched on another server connection: fetch client-side.
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env_bool("ZM_DB_TRANSACTION_POOLING", False)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if TESTING:
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Sign-in throttling (django-axes): after ZM_LOGIN_FAILURE_LIMIT wrong passwords for one
# username, or from one address, that username or address is locked out for
# ZM_LOGIN_LOCKOUT_MINUTES; a success clears only that username's failures from that address
# (zeromemory.lockout), and staff unlock at once in the admin (Axes › Access attempts: delete the
# rows). Behind N reverse proxies set ZM_PROXY_COUNT=N so the client's address is read from
# X-Forwarded-For; otherwise that header is ignored (it is spoofable).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("ZM_LOGIN_FAILURE_LIMIT", 5, minimum=1)
LOGIN_LOCKOUT_MINUTES = env_int("ZM_LOGIN_LOCKOUT_MINUTES", 15, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=LOGIN_LOCKOUT_MINUTES)
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_HANDLER = "zeromemory.lockout.SignInLockout"
AXES_LOCKOUT_CALLABLE = "dashboard.views.account.locked_out"
AXES_VERBOSE = False
PROXY_COUNT = env_int("ZM_PROXY_COUNT", 0)
AXES_IPWARE_PROXY_COUNT = PROXY_COUNT or None
AXES_IPWARE_PROXY_ORDER = "right-most"
AXES_IPWARE_META_PRECEDENCE_ORDER = (
    ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR") if PROXY_COUNT else ("REMOTE_ADDR",)
)

LOGIN_URL = "dashboard:login"
LOGIN_REDIRECT_URL = "dashboard:home"
LOGOUT_REDIRECT_URL = "dashboard:login"
# Anyone may create an account on the sign-up page; false hides the page (admins add users).
SIGNUP_ENABLED = env_bool("ZM_SIGNUP_ENABLED", True)

LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", "English"),
    ("es", "Español"),
    ("de", "Deutsch"),
    ("fr", "Français"),
    ("ja", "日本語"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
MODELTRANSLATION_DEFAULT_LANGUAGE = "en"
MODELTRANSLATION_FALLBACK_LANGUAGES = ("en",)
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve straight from the app and static folders; no collectstatic step for `make run`.
WHITENOISE_USE_FINDERS = True
# Django's test client builds the middleware again for every client it makes: under pytest,
# static files are looked up per request instead of listed from every app at each build (a
# quarter of a tenancy-matrix test's time). Served processes list them once, as in production.
WHITENOISE_AUTOREFRESH = DEBUG or "pytest" in sys.modules

# Request bodies: one limit for every surface (JSON API, forms, MCP).
MAX_BODY_BYTES = env_int("ZM_MAX_BODY_BYTES", 1_048_576, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_BODY_BYTES

# Calls per user per window (N/s, N/min, N/hour, N/day), counted in the database so the limit
# holds across every web process; empty turns it off.
API_RATE = env_str("ZM_API_RATE", "6000/min")
_rate_count, _, _rate_period = API_RATE.partition("/")
if API_RATE and not (_rate_count.isdigit() and _rate_period[:1] in ("s", "m", "h", "d")):
    raise ValueError(
        f"ZM_API_RATE must look like 600/min (N/s, N/min, N/hour, N/day), not {API_RATE!r}"
    )

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "scopes.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["zeromemory.core.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_THROTTLE_CLASSES": ["zeromemory.core.throttling.ActorRateThrottle"],
    "EXCEPTION_HANDLER": "zeromemory.core.envelope.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "zero-memory API",
    "DESCRIPTION": "Long-term memory for AI agents and their teams.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # An enum named after its field would be a bare `TypeEnum`: name it for what it holds.
    "ENUM_NAME_OVERRIDES": {"LinkTypeEnum": "memories.entities.links.LINK_TYPES"},
}

# Prometheus metrics at /metrics. Every process (web, worker) writes its counts under the data
# dir and a scrape adds them up; the variable must be set before prometheus_client is imported.
METRICS = env_bool("ZM_METRICS", False)
METRICS_TOKEN = env_str("ZM_METRICS_TOKEN")
if METRICS:
    if SECURE and not METRICS_TOKEN:
        raise ValueError("ZM_METRICS with ZM_SECURE needs ZM_METRICS_TOKEN (scrapes send it)")
    METRICS_DIR = Path(env_str("PROMETHEUS_MULTIPROC_DIR") or DATA_DIR / "metrics").resolve()
    METRICS_DIR.mkdir(parents=True, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(METRICS_DIR)

# The product's own knobs: memories, canonical English, capture, portability.
# The OAuth 2.1 authorization server that signs MCP clients in.
from zeromemory.settings_oauth import *  # noqa: E402, F403
from zeromemory.settings_product import *  # noqa: E402, F403

# How `manage.py serve` runs: web processes and threads, the django-q2 worker.
from zeromemory.settings_serving import *  # noqa: E402, F403

# Requests first across the host's processes (zeromemory.core.foreground): the file in which every
# process counts the requests it has in flight (one per host; the data dir is this host's).
FOREGROUND_FILE = Path(env_str("ZM_FOREGROUND_FILE") or DATA_DIR / "foreground").resolve()

# Streaming replicas for the read paths (zeromemory.core.routing): replica1, replica2, ...
DATABASES.update(replica_databases(DATABASES["default"]))  # noqa: F405
DATABASE_ROUTERS = ["zeromemory.core.routing.ReplicaRouter"] if len(DATABASES) > 1 else []

LOG_LEVEL = env_str("ZM_LOG_LEVEL", "INFO").upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "pgserver": {"level": "WARNING"},
        # The MCP SDK logs every session opened and closed.
        "mcp": {"level": "WARNING"},
        # django-axes logs every sign-in; lockouts are in the admin.
        "axes": {"level": "WARNING"},
    },
}

if not DEBUG and not TESTING:
    SESSION_COOKIE_HTTPONLY = True
    CSRF_COOKIE_SAMESITE = "Lax"
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"
