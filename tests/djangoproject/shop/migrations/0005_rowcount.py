from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("shop", "0004_revisioned_updated_index")]

    operations = [
        migrations.CreateModel(
            name="RowCount",
            fields=[
                ("name", models.CharField(max_length=40, primary_key=True, serialize=False)),
                ("total", models.BigIntegerField(null=True)),
            ],
        ),
    ]
