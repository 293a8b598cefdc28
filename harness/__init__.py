"""What tests use to reach a target: profiles, clients, the ledger, checks and the pytest plugin."""

from harness._client import SafetyError, TargetClient
from harness._control import ControlPlane, ControlPlaneError
from harness._examples import ExampleBudget, example_budget_of
from harness._profile import Profile, ProfileError, load
from harness._run import Run

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
