"""Reaching the target: the profile, the paced and guarded client and its key pools, the target's
health, the preflight, the control plane, the embedded server and the webhook receiver.
"""
