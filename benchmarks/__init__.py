"""Speed benchmarks: every measurement is a ratio taken within one run (no timed tests)."""
