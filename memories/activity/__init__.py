"""The activity log: its model (`models`), its writes and reads (`log`), the one way a call gets
its row (`logged.activity_logged`), and the scheduled prune and fold (`memories.tasks`, the path
the schedules name)."""
