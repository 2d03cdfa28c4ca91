from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("shop", "0003_revisioned")]

    operations = [
        migrations.AlterField(
            model_name="revisioned",
            name="updated",
            field=models.DateTimeField(db_index=True, null=True),
        ),
    ]
