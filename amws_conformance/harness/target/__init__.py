"""Reaching the target: the profile, the paced and guarded client (its chain of steps, its named
views) and its key pools, the target's health, the preflight, the control plane, the embedded
server and the webhook receiver.
"""
