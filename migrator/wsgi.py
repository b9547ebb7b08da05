import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "migrator.settings")
application = get_wsgi_application()

from migrator.checks import warn_at_start  # noqa: E402  (needs the settings loaded above)

warn_at_start()
