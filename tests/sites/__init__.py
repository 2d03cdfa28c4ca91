"""Sites the tests serve or load as ``module:app`` (``check --app tests.sites.X:app``)."""
