from django.db import migrations


def create_gin_index(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS notebook_entry_search_gin ON notebook_entry USING gin (search_vector)"
        )


def drop_gin_index(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS notebook_entry_search_gin")


class Migration(migrations.Migration):
    """A GIN index makes full-text search fast; SQLite installs (fallback) have no tsvector."""

    dependencies = [("notebook", "0001_initial")]
    operations = [migrations.RunPython(create_gin_index, drop_gin_index)]
