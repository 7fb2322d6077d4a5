"""One analysis module per claim notebook: measurements and verdict rows for each of the paper's claims."""
