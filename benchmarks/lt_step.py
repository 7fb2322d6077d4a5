"""Benchmark: images/s of one SimCLR step on CIFAR-sized images (kornia views + forward + backward + SGD step),
and the share of the step spent in augmentation (target: at most 25%; issue 6).

    .venv/bin/python benchmarks/lt_step.py [--width 8] [--batch 256] [--steps 5] [--threads 0] [--method simclr]

Random uint8 images stand in for CIFAR (the cost does not depend on the pixels). A warm-up step runs first
(kornia's first call is slow). On a shared CPU the numbers drop; the ratio is the more stable quantity.
"""
from __future__ import annotations

import argparse
import time

import torch


def main(argv=None) -> dict:
    """Time `steps` SimCLR steps after one warm-up; print and return the measurements."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--width", type=int, default=8, help="ResNet-18 first-stage channels (64: the real one)")
    ap.add_argument("--batch", type=int, default=256, help="images per step (two views each)")
    ap.add_argument("--steps", type=int, default=5, help="timed steps after the warm-up")
    ap.add_argument("--size", type=int, default=32, help="image side")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: the torch default)")
    ap.add_argument("--method", default="simclr", choices=("simclr", "sdclr", "alg1"))
    a = ap.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    from imbalanced_cl.lt import sdclr
    from imbalanced_cl.lt.augment import SimCLRAugment
    from imbalanced_cl.lt.simclr import SimCLRNet, nt_xent

    torch.manual_seed(0)
    net = SimCLRNet(a.width, 3, 128)
    aug = SimCLRAugment(a.size, 3, (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    if a.method != "simclr":
        sdclr.global_magnitude_masks(net.backbone, 0.9)
    modes = sdclr.BRANCH_MODES[a.method]
    x = torch.randint(0, 256, (a.batch, 3, a.size, a.size), dtype=torch.uint8)
    print(f"config: ResNet-18 width {a.width} ({sum(p.numel() for p in net.backbone.parameters()):,} backbone "
          f"params), batch {a.batch} images = {2 * a.batch} views of {a.size}x{a.size}, method {a.method}, "
          f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {a.steps} timed step(s) after 1 warm-up")
    t_aug = t_all = 0.0
    for i in range(a.steps + 1):
        t0 = time.perf_counter()
        v1, v2 = aug(x), aug(x)
        t1 = time.perf_counter()
        z1, z2 = net(v1, v2, modes)
        loss = nt_xent(z1, z2, 0.2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        t2 = time.perf_counter()
        if i > 0:                                   # step 0 is the warm-up
            t_aug += t1 - t0
            t_all += t2 - t0
    out = {"images_per_s": a.batch * a.steps / t_all, "views_per_s": 2 * a.batch * a.steps / t_all,
           "aug_share": t_aug / t_all, "step_s": t_all / a.steps, "aug_s": t_aug / a.steps}
    print(f"step: {out['step_s']:.3f} s  ({out['images_per_s']:.0f} images/s, {out['views_per_s']:.0f} views/s)")
    print(f"augmentation: {out['aug_s']:.3f} s per step = {out['aug_share']:.1%} of the step "
          f"(target <= 25%: {'met' if out['aug_share'] <= 0.25 else 'NOT met'})")
    return out


if __name__ == "__main__":
    main()
