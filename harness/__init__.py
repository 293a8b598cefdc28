"""What tests use to reach a target: profiles, clients, the ledger, checks and the pytest plugin."""

from harness._client import SafetyError, TargetClient
from harness._control import ControlPlane, ControlPlaneError
from harness._profile import Profile, ProfileError, load

__all__ = [
    "ControlPlane",
    "ControlPlaneError",
    "Profile",
    "ProfileError",
    "SafetyError",
    "TargetClient",
    "load",
]
