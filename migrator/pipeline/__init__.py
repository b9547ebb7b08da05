"""The pipeline app (no models): runs stages and records them, hands stages to Celery, sweeps."""
