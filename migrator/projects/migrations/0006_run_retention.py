from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('projects', '0005_stage_queued_index'),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='work_removed_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='run',
            name='files_expired_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
