"""Figures: the kinds every claim notebook shares (common) and one module per notebook's own figures."""
