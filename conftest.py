"""Root conftest: the one place the harness plugin is loaded from when running from a checkout.

The plugin arrives with the harness; until then the project's own tests need nothing here.
"""
