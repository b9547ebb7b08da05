"""Runs must carry the source they fetch (archive runs their archive, git runs a URL).

On PostgreSQL the checks are added NOT VALID: enforced for every new or changed row at once,
without failing the upgrade on rows an earlier version may have left inconsistent (their fetch
fails with "this run's archive is missing" instead of turning into a git fetch).
"""
from __future__ import annotations

from typing import Any

from django.db import migrations, models
from django.db.models import Q

CONSTRAINTS = [
    models.CheckConstraint(condition=~Q(source_kind="archive") | Q(archive__isnull=False), name="archive_run_has_archive"),
    models.CheckConstraint(condition=~Q(source_kind="git") | ~Q(git_url=""), name="git_run_has_url"),
]


def add_checks(apps: Any, schema_editor: Any) -> None:
    run = apps.get_model("projects", "Run")
    for constraint in CONSTRAINTS:
        if schema_editor.connection.vendor == "postgresql":
            named_check = constraint.constraint_sql(run, schema_editor)  # CONSTRAINT "name" CHECK (...)
            table = schema_editor.quote_name(run._meta.db_table)
            schema_editor.execute(f"ALTER TABLE {table} ADD {named_check} NOT VALID")
        else:
            schema_editor.add_constraint(run, constraint)


def drop_checks(apps: Any, schema_editor: Any) -> None:
    run = apps.get_model("projects", "Run")
    for constraint in CONSTRAINTS:
        schema_editor.remove_constraint(run, constraint)


class Migration(migrations.Migration):
    dependencies = [("projects", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AddConstraint(model_name="run", constraint=c) for c in CONSTRAINTS],
            database_operations=[migrations.RunPython(add_checks, drop_checks)],
        )
    ]
