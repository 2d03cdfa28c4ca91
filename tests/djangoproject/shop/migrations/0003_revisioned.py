from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("shop", "0002_tag")]

    operations = [
        migrations.CreateModel(
            name="Revisioned",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False)),
                ("code", models.CharField(max_length=40, null=True)),
                ("updated", models.DateTimeField(null=True)),
                ("revision", models.BigIntegerField(db_index=True)),
            ],
            options={"ordering": ["pk"]},
        ),
    ]
