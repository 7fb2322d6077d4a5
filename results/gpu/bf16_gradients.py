"""Why does one bf16 step's stem gradient differ from fp32's by 39%? Per-parameter errors against a float64 step."""
import sys
import torch
sys.path.insert(0, "tests")
import test_lt_speed as T
from imbalanced_cl.lt import speed
dev = torch.device(sys.argv[1] if len(sys.argv) > 1 else "cuda")
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False


def flat(g):
    return torch.cat([v.reshape(-1) for v in g.values()])


def rel(a, b):
    return float((a - b).norm() / b.norm())


def cos(a, b):
    return float((a * b).sum() / a.norm() / b.norm())


for n, size, seed in [(64, 32, 5), (64, 32, 6), (256, 32, 5)]:
    x1, x2 = T._views(n=n, size=size, seed=seed)
    ex = T._step("simclr", speed.EAGER, x1, x2, torch.device("cpu"), dtype=torch.float64)
    f32 = T._step("simclr", speed.StepOptions(precision="fp32", compile=False), x1, x2, dev)
    bf = T._step("simclr", speed.StepOptions(precision="bf16", compile=False), x1, x2, dev)
    print(f"n={n} size={size} seed={seed}: loss x={ex[0]:.5f} f32={f32[0]:.5f} bf16={bf[0]:.5f}; whole grad rel err "
          f"f32 {rel(flat(f32[1]), flat(ex[1])):.2e} bf16 {rel(flat(bf[1]), flat(ex[1])):.3f} cos(bf16, x) "
          f"{cos(flat(bf[1]), flat(ex[1])):.4f}")
    for k in list(ex[1])[:4] + list(ex[1])[-4:]:
        print(f"   {k:40s} |g|={float(ex[1][k].norm()):.3e} f32 {rel(f32[1][k], ex[1][k]):.1e} "
              f"bf16 {rel(bf[1][k], ex[1][k]):.3f} cos {cos(bf[1][k], ex[1][k]):.3f}")
