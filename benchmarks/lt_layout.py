"""Benchmark: the real-image step on a CPU under each memory-layout rule, at the ci and default widths (issue 25).

    .venv/bin/python benchmarks/lt_layout.py [--widths 4 8] [--batch 256] [--steps 6] [--method sdclr] [--quick]

On AVX2-only CPUs, torch 2.13.0's oneDNN backward of a channels-last 1x1 stride-2 convolution with fewer than 8
input channels corrupts the heap (ResNet-18's shortcut at width < 8). The options for the CPU step:
- contiguous: channels-last off;
- channels_last: NHWC everywhere (crashes at width 4 on such CPUs);
- cl_no_onednn: NHWC with torch.backends.mkldnn.enabled = False (oneDNN off: torch's own slow kernels);
- safe: the package's rule (lt/speed.safe): channels-last unless a strided 1x1 conv has < 8 input channels.
Each (width, option) runs in its own child process on one thread (a crash kills only the child, and is reported
with its signal). Printed: images/s per option and its ratio to contiguous at the same width. Random uint8
images stand in for CIFAR (the cost does not depend on the pixels); the children run one after another.
"""
from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys

OPTIONS = ("contiguous", "channels_last", "cl_no_onednn", "safe")

CHILD = r"""
import json, statistics, sys, time, torch
torch.set_num_threads(1)
width, option, batch, method, steps = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
from imbalanced_cl.lt import sdclr, speed
from imbalanced_cl.lt.augment import SimCLRAugment
from imbalanced_cl.lt.simclr import SimCLRNet, forward_backward
if option == "cl_no_onednn":
    torch.backends.mkldnn.enabled = False
cpu = torch.device("cpu")
torch.manual_seed(0)
net = SimCLRNet(width, 3, 128, dual_bn=method == "sdclr")
opts = speed.StepOptions(channels_last=option != "contiguous", compile=False, precision="fp32")
if option == "safe":
    opts = speed.safe(net, opts, cpu)
    net = speed.prepare(net, opts)
else:                                          # the unguarded layouts, as they were before the rule
    net = net.to(memory_format=opts.memory_format)
if method != "simclr":
    sdclr.global_magnitude_masks(net.backbone, 0.9)
aug = SimCLRAugment(32, 3, (0.49, 0.48, 0.45), (0.25, 0.24, 0.26))
x = torch.randint(0, 256, (batch, 3, 32, 32), dtype=torch.uint8)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
def step():
    t0 = time.perf_counter()
    v1, v2 = speed.to_format(aug(x), opts), speed.to_format(aug(x), opts)
    opt.zero_grad(set_to_none=True)
    forward_backward(net, v1, v2, sdclr.BRANCH_MODES[method], 0.2, cpu, opts, None)
    opt.step()
    return time.perf_counter() - t0
for _ in range(2):
    step()
ts = [step() for _ in range(steps)]
print(json.dumps({"step_s": statistics.median(ts), "channels_last": opts.channels_last}))
"""


def run_child(width: int, option: str, batch: int, method: str, steps: int) -> dict:
    """One (width, option) in a child process: {'step_s', 'channels_last'} or {'crash': 'SIGSEGV ...'}."""
    p = subprocess.run([sys.executable, "-c", CHILD, str(width), option, str(batch), method, str(steps)],
                       capture_output=True, text=True, env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
    if p.returncode == 0:
        return json.loads(p.stdout.strip().splitlines()[-1])
    sig = -p.returncode if p.returncode < 0 else p.returncode - 128
    name = signal.Signals(sig).name if 0 < sig < 65 else f"exit {p.returncode}"
    last = (p.stderr.strip().splitlines() or [""])[-1][:120]
    return {"crash": f"{name} ({last})"}


def main(argv=None) -> dict:
    """Time each layout option at each width, one child process each; print and return the table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--widths", type=int, nargs="+", default=[4, 8], help="ResNet-18 widths (ci 4, default 8)")
    ap.add_argument("--batch", type=int, default=256, help="images per step (two views each)")
    ap.add_argument("--steps", type=int, default=6, help="timed steps after two warm-up steps")
    ap.add_argument("--method", default="sdclr", choices=("simclr", "sdclr", "alg1"))
    ap.add_argument("--quick", action="store_true", help="3 timed steps, batch 128 (what `make bench` runs)")
    a = ap.parse_args(argv)
    if a.quick:
        a.steps, a.batch = 3, 128
    print(f"config: {a.method} step, batch {a.batch}, 32x32 images, 1 thread per child, {a.steps} timed steps")
    out = {}
    for w in a.widths:
        res = {o: run_child(w, o, a.batch, a.method, a.steps) for o in OPTIONS}
        out[w] = res
        base = res["contiguous"].get("step_s")
        for o, r in res.items():
            if "crash" in r:
                print(f"width {w:>2} {o:<14} CRASHED: {r['crash']}")
            else:
                ratio = f"{base / r['step_s']:.2f}x contiguous" if base else "n/a"
                print(f"width {w:>2} {o:<14} {a.batch / r['step_s']:7.0f} images/s  ({ratio}; "
                      f"ran {'channels-last' if r['channels_last'] else 'contiguous'})")
    return out


if __name__ == "__main__":
    main()
