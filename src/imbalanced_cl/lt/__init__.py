"""Real-image long-tailed benchmarks (Table 2, claim 5): datasets, kornia views, ResNet-18, SimCLR/SDCLR/Alg. 1, probe.

Modules: datasets (CIFAR-10 JPEG pack or original, CIFAR-100, ImageNet-LT, digits; LT subsets), augment (kornia),
resnet (CIFAR-stem ResNet-18 with width multiplier), simclr (NT-Xent, training loop, torchrun/DDP), sdclr (global
magnitude masks), probe (linear probe, Δ20, many/medium/few), config (LTConfig), experiment (runs, Table 2, verdicts).
Run one configuration from the command line (also under torchrun): `python -m imbalanced_cl.lt --help`.
"""
from .config import LTConfig

__all__ = ["LTConfig"]
