from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("shop", "0001_initial")]

    operations = [
        migrations.CreateModel(
            name="Tag",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False)),
                ("code", models.CharField(max_length=40, null=True, unique=True)),
                ("updated", models.DateTimeField(null=True)),
            ],
            options={"ordering": ["pk"]},
        ),
    ]
