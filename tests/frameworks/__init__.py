"""One small app per framework, wrapped by the middleware as its users would wrap it.

Each module's ``app`` is what the server runs (tests/integration/test_frameworks.py): the
site at the root, and a second instance of the same site mounted under :data:`PREFIX`
(the framework's own mount where it has one, else the server's root_path / SCRIPT_NAME).
"""
