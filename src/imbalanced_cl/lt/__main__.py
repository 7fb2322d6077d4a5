"""Command line for notebook 06's runs: one profile's settings plus overrides; works under torchrun (DDP).

    python -m imbalanced_cl.lt --profile paper --set dataset=cifar100 n_max=450 --rho 100 --method sdclr --seed 0
    torchrun --standalone --nproc_per_node=8 -m imbalanced_cl.lt --profile paper --rho 100 --method sdclr --seed 0

Each run writes its metrics to results_dir (JSON); the notebook, given the same results_dir, reuses them.
"""
from __future__ import annotations

import argparse
import json

import yaml

from ..book.build.profiles import params as profile_params
from .config import LTConfig
from .experiment import run_one
from .simclr import dist_info


def _value(text: str):
    return yaml.safe_load(text)


def main(argv=None) -> int:
    """Parse arguments, build a validated LTConfig, run the requested (rho, method, seed) grid."""
    ap = argparse.ArgumentParser(prog="python -m imbalanced_cl.lt", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default", help="ci, default or paper (profiles.yaml, 06_lt_benchmarks)")
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override LTConfig fields (YAML values)")
    ap.add_argument("--rho", type=float, nargs="*", help="imbalance ratios (default: the profile's rhos)")
    ap.add_argument("--method", nargs="*", help="methods (default: the profile's methods)")
    ap.add_argument("--seed", type=int, nargs="*", help="seeds (default: the profile's seeds)")
    a = ap.parse_args(argv)
    kw = profile_params(a.profile, "06_lt_benchmarks")
    for item in a.set:
        k, _, v = item.partition("=")
        kw[k] = _value(v)
    cfg = LTConfig.from_namespace(kw)
    rank, _, _ = dist_info()
    for rho in a.rho or cfg.rhos:
        for seed in a.seed if a.seed is not None else cfg.seeds:
            for method in a.method or cfg.methods:
                for row in run_one(cfg, rho, method, seed):
                    if rank == 0:
                        print(json.dumps({k: row[k] for k in ("dataset", "rho", "method", "seed", "acc", "delta20",
                                                              "many", "medium", "few", "pretrain_s")}), flush=True)
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
