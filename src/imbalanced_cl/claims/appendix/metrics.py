"""The four metrics of App. A.2 (Figs. 1-4): minority alignment counts and maxima, test cosine, ridge-probe MSE."""
from __future__ import annotations

import torch

from ...sim import metrics
from ...sim.encoder import embed


def minority_alignment(W: torch.Tensor, M: torch.Tensor, n_minority: int) -> torch.Tensor:
    """Per neuron, max over minority features of |cos(w_i, M_j)| (R, m); minority features are the last ones."""
    return metrics.cosine_matrix(W, M)[..., M.shape[-1] - n_minority:].amax(-1)


def align_count(W: torch.Tensor, M: torch.Tensor, n_minority: int, threshold: float) -> torch.Tensor:
    """Fig. 1: number of neurons with |cos(w_i, M_minority)| >= threshold, per replicate (R,)."""
    return (minority_alignment(W, M, n_minority) >= threshold).sum(-1).float()


def align_max(W: torch.Tensor, M: torch.Tensor, n_minority: int) -> torch.Tensor:
    """Fig. 2: max over neurons of |cos(w_i, M_minority)|, per replicate (R,)."""
    return minority_alignment(W, M, n_minority).amax(-1)


def ridge_fit(F: torch.Tensor, Y: torch.Tensor, ridge: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Closed-form ridge regression with intercept: (beta (m,k), intercept (k,)); penalty ridge*tr(F^T F)/m."""
    F, Y = F.double(), Y.double()
    mf, my = F.mean(0), Y.mean(0)
    Fc, Yc = F - mf, Y - my
    G = Fc.T @ Fc
    lam = ridge * float(G.trace()) / G.shape[0]
    A = G + lam * torch.eye(G.shape[0], dtype=G.dtype)
    beta = torch.linalg.lstsq(A, Fc.T @ Yc, driver="gelsd").solution  # rank-deficient F (dead neurons) is fine
    return beta, my - mf @ beta


def ridge_errors(Ftr, Ytr, Fte, Yte, ridge: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Per target coordinate: test MSE of a ridge head fit on (Ftr, Ytr), and the test variance (float64)."""
    beta, c = ridge_fit(Ftr, Ytr, ridge)
    Yte = Yte.double()
    return (Fte.double() @ beta + c - Yte).pow(2).mean(0), Yte.var(0, unbiased=False)


def normalised(err: torch.Tensor, var: torch.Tensor, last: int = 0) -> float:
    """Fig. 4 diagnostic: mean of err / var (1 - R^2) over the coordinates with nonzero variance, or over the
    `last` coordinates only (the minority ones of the latent target); NaN if none has variance.

    The raw MSE grows with a coordinate's variance, which for the minority coordinate grows with eps_min;
    dividing by it asks how much of each coordinate the head explains, whatever its scale. Ridge fits each
    output column on its own, so a subset of columns is scored by the same fit.
    """
    if last:
        err, var = err[-last:], var[-last:]
    ok = var > 0
    return float((err[ok] / var[ok]).mean()) if bool(ok.any()) else float("nan")


def ridge_mse(Ftr, Ytr, Fte, Yte, ridge: float) -> float:
    """Fig. 4: test MSE (mean over samples and target coordinates) of a linear head fit on (Ftr, Ytr)."""
    return float(ridge_errors(Ftr, Ytr, Fte, Yte, ridge)[0].mean())


# 9 arguments: one network (W, b), its test pairs (UX, UY), the head's fitting anchors and both targets, the ridge
def eval_metrics(W, b, UX, UY, UXtr, Ztr, Zte, ridge: float, last: int = 0) -> tuple[float, float, float, float]:
    """Figs. 3-4 for one network (W (m,d1), b (m,)): mean test cos(f(X), f(Y)), the ridge head's test MSE, its
    variance-normalised MSE, and that of the `last` target coordinates alone (diagnostics; one ridge fit).

    UX, UY: (n, L, d1) test pairs after attention; UXtr: (n_tr, L, d1) the head's training anchors;
    Ztr, Zte: regression targets of the training and test anchors.
    """
    W, b = W[None], b[None]
    FX, FY = embed(W, UX[None], b)[0], embed(W, UY[None], b)[0]
    cos = float(metrics.pos_pair_cosine(FX, FY)[0])
    Ftr = embed(W, UXtr[None], b)[0][0]
    err, var = ridge_errors(Ftr, Ztr, FX[0], Zte, ridge)
    return cos, float(err.mean()), normalised(err, var), normalised(err, var, last)
