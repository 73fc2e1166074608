import os

from django.core.wsgi import get_wsgi_application

from config.startup import require_secret_key

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
require_secret_key()
application = get_wsgi_application()
