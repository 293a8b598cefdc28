"""What tests use to reach a target: profiles, clients, the ledger, checks and the pytest plugin."""

from amws_conformance.harness._examples import ExampleBudget, example_budget_of
from amws_conformance.harness._run import Run
from amws_conformance.harness.target.client import TargetClient
from amws_conformance.harness.target.control import ControlPlane, ControlPlaneError
from amws_conformance.harness.target.profile import Profile, ProfileError, load
from amws_conformance.harness.target.steps import SafetyError

__all__ = [
    "ControlPlane",
    "ControlPlaneError",
    "ExampleBudget",
    "Profile",
    "ProfileError",
    "Run",
    "SafetyError",
    "TargetClient",
    "example_budget_of",
    "load",
]
