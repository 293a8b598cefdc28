"""What tests use to reach a target: profiles, clients, the ledger, checks and the pytest plugin."""

from harness._examples import ExampleBudget, example_budget_of
from harness._run import Run
from harness.target.client import SafetyError, TargetClient
from harness.target.control import ControlPlane, ControlPlaneError
from harness.target.profile import Profile, ProfileError, load

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
