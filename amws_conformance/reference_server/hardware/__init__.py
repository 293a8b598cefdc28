"""Simulated door hardware: controllers, relays, readers and what each controller holds."""
