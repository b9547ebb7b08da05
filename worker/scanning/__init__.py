"""Framework-free scanning of a CUDA code base: inventory, build-file findings and safe fixes.

Public entry points: ``inventory.build_inventory``, ``findings.scan_build_files``,
``fixes.apply_fixes``. Nothing here imports Django or Celery.
"""
