"""A run's life on a shared target: the cleanup ledger and its journal, sweeps after a crash,
interrupts, and the live status line.
"""
