"""Entities per scope (issue 40): the entity, its aliases (one name form, unique per scope), the
memories that mention it (with where each mention came from), and the merges and splits that
reshaped entities, kept as rows. New tables only: existing memories get their mentions when
they are next written, edited or imported."""

import django.db.models.deletion
import django.utils.timezone
import functools
import zeromemory.core.ids
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0030_memory_links'),
        ('scopes', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Entity',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('public_id', models.CharField(default=functools.partial(zeromemory.core.ids.new_public_id, *('ent',), **{}), editable=False, max_length=40, unique=True, verbose_name='id')),
                ('kind', models.CharField(choices=[('person', 'Person'), ('team', 'Team'), ('service', 'Service'), ('repository', 'Repository'), ('path', 'File or path'), ('tool', 'Library or tool'), ('product', 'Product'), ('organisation', 'Organisation'), ('place', 'Place'), ('event', 'Named event'), ('url', 'URL'), ('handle', 'Handle'), ('ticket', 'Ticket'), ('identifier', 'Identifier (code)'), ('name', 'Name')], max_length=16, verbose_name='kind')),
                ('name', models.CharField(max_length=200, verbose_name='name')),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now, verbose_name='created')),
                ('merged_into', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='merged', to='memories.entity')),
                ('scope', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='entities', to='scopes.scope', verbose_name='scope')),
            ],
            options={
                'verbose_name': 'entity',
                'verbose_name_plural': 'entities',
                'ordering': ['scope_id', 'name'],
            },
        ),
        migrations.CreateModel(
            name='EntityAlias',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('alias', models.CharField(max_length=200, verbose_name='alias')),
                ('normalized', models.CharField(max_length=200)),
                ('source', models.CharField(choices=[('detected', 'Detected on write'), ('agent', 'Given by the writer'), ('extractor', 'Extractor'), ('translator', 'Translator'), ('import', 'Archive import')], max_length=16)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('entity', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='aliases', to='memories.entity')),
                ('scope', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='scopes.scope')),
            ],
            options={
                'verbose_name': 'entity alias',
                'verbose_name_plural': 'entity aliases',
                'ordering': ['entity_id', 'id'],
            },
        ),
        migrations.CreateModel(
            name='EntityMention',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('source', models.CharField(choices=[('detected', 'Detected on write'), ('agent', 'Given by the writer'), ('extractor', 'Extractor'), ('translator', 'Translator'), ('import', 'Archive import')], max_length=16)),
                ('surface', models.CharField(blank=True, default='', max_length=200)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('entity', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='mentions', to='memories.entity')),
                ('memory', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='mentions', to='memories.memory')),
            ],
            options={
                'ordering': ['memory_id', 'id'],
            },
        ),
        migrations.CreateModel(
            name='EntityMerge',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('at', models.DateTimeField(default=django.utils.timezone.now)),
                ('undone_at', models.DateTimeField(blank=True, null=True)),
                ('by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('merged', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.entity')),
                ('scope', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='scopes.scope')),
                ('survivor', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.entity')),
                ('undone_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['scope_id', '-at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='EntitySplit',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('alias_ids', models.JSONField(default=list)),
                ('mention_ids', models.JSONField(default=list)),
                ('at', models.DateTimeField(default=django.utils.timezone.now)),
                ('undone_at', models.DateTimeField(blank=True, null=True)),
                ('by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('created', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.entity')),
                ('scope', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='scopes.scope')),
                ('source', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.entity')),
                ('undone_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['scope_id', '-at', '-id'],
            },
        ),
        migrations.AddIndex(
            model_name='entity',
            index=models.Index(fields=['scope', 'kind'], name='entity_scope_kind'),
        ),
        migrations.AddConstraint(
            model_name='entityalias',
            constraint=models.UniqueConstraint(fields=('scope', 'normalized'), name='entity_alias_unique_in_scope'),
        ),
        migrations.AddIndex(
            model_name='entitymention',
            index=models.Index(fields=['entity', 'memory'], name='entity_mention_by_entity'),
        ),
        migrations.AddConstraint(
            model_name='entitymention',
            constraint=models.UniqueConstraint(fields=('memory', 'entity', 'source'), name='entity_mention_unique'),
        ),
        migrations.AddConstraint(
            model_name='entitymerge',
            constraint=models.UniqueConstraint(condition=models.Q(('undone_at__isnull', True)), fields=('merged',), name='entity_merge_one_open'),
        ),
    ]
