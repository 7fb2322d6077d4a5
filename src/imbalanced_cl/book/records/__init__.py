"""Verdict rows read back from executed notebooks, recorded results, provenance and seed stability."""
