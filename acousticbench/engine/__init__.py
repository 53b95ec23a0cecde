"""The async executor: one retry policy, adaptive concurrency, slots and progress."""
