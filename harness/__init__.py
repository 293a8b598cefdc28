"""What tests use to reach a target: profiles, clients, the ledger, checks and the pytest plugin."""

from harness._client import SafetyError, TargetClient
from harness._profile import Profile, ProfileError, load

__all__ = ["Profile", "ProfileError", "SafetyError", "TargetClient", "load"]
