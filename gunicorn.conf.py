"""How gunicorn serves the dashboard: ``gunicorn -c gunicorn.conf.py -b HOST:PORT`` (./dev up's Procfile, the
Dockerfile and docker-compose.yml all run this; gunicorn also reads it on its own from this folder).

Threaded workers (``migrator.serving``: gunicorn's gthread with a deadline on reading each request), so a
slow client holds one thread for seconds rather than a whole worker for minutes. Each worker accepts no
more connections than it has threads, leaving the rest to workers with a free thread.

Every thread may keep one PostgreSQL connection open (``MIGRATOR_DB_CONN_MAX_AGE``): keep
``MIGRATOR_WEB_WORKERS`` x ``MIGRATOR_WEB_THREADS`` plus the Celery workers' processes below the server's
``max_connections`` (100 by default). In production put a buffering reverse proxy in front (README,
Deployment): it reads whole requests before passing them on, which no thread count replaces.
"""
from __future__ import annotations

import os


def _count(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise SystemExit(f"{name} must be a whole number of at least 1, got {raw!r}")
    return int(raw)


wsgi_app = "migrator.wsgi"
worker_class = "migrator.serving.ReadDeadlineThreadWorker"
workers = _count("MIGRATOR_WEB_WORKERS", 2)
threads = _count("MIGRATOR_WEB_THREADS", 32)
worker_connections = threads
timeout = 30  # a worker whose main loop stops answering is restarted; requests themselves are not cut
graceful_timeout = 30
keepalive = 5
