"""Planning a run: the cost table, plans, the forecast on the target's buckets, the schedule and
deadline, what a run spends and who it is booked to, and how many workers run it.
"""
