"""imbalanced_cl: the companion package of 'Theoretical analysis of contrastive learning under imbalanced data'.

Its layers, what lives where and which way the imports run: docs/architecture.md (tests/test_layers.py checks them).
"""
__version__ = "0.2.0"
