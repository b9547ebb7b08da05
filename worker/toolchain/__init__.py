"""Framework-free ROCm toolchain helpers: detection, compile, link, diagnostics, sandbox.

Nothing here imports Django or Celery; the pipeline stages in ``worker/stages`` wrap it.
"""
