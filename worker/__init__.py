"""The migration pipeline: stage modules, the pipeline that records them, Celery wrappers."""
