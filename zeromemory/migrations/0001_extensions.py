from django.db import migrations

from zeromemory.dbcheck import require_extensions


def create_extensions(apps, schema_editor):
    require_extensions(schema_editor.connection)
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS vector")
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [migrations.RunPython(create_extensions, migrations.RunPython.noop)]
