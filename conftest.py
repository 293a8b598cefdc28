"""Root conftest: loads the harness plugin when running from a checkout (the installed package
loads it through its ``pytest11`` entry point under the same name, so it is registered once)."""

pytest_plugins = ["amws_conformance.harness.plugin"]
