"""InfoNCE with StopGrad (eqs. 1-3) and its gradient (eqs. 5, 21), batched over replicates.

Negatives: for anchor X_k the negative set is {Y_k' : k' != k}, whose latents are independent of X_k
(Assumption 3.4), so the logits form an n x n matrix per replicate.

Scaling: with cfg.tau_scaled (the default) the objective is tau * InfoNCE, whose gradient is eq. (5)/(21)
exactly; the paper's gradients omit the 1/tau factor and its convergence proof uses tau * InfoNCE
(eqs. 118, 159). With tau_scaled=False the gradient carries 1/tau, and so does every predicted rate.
"""
from __future__ import annotations

import torch


def logits(FX: torch.Tensor, FY: torch.Tensor, tau: float) -> torch.Tensor:
    """sim(X_k, Y_k')/tau = <f(X_k), StopGrad f(Y_k')>/tau, shape (R, n, n)  (eq. 2)."""
    return FX @ FY.detach().transpose(-1, -2) / tau


def infonce(FX: torch.Tensor, FY: torch.Tensor, tau: float) -> torch.Tensor:
    """Mean InfoNCE loss per replicate (R,), positives on the diagonal  (eqs. 1, 3 without the regulariser)."""
    lg = logits(FX, FY, tau)
    return -(torch.diagonal(lg, dim1=-2, dim2=-1) - torch.logsumexp(lg, dim=-1)).mean(dim=-1)


def softmax_logits(FX: torch.Tensor, FY: torch.Tensor, tau: float) -> torch.Tensor:
    """l'_p on the diagonal and l'_s off it (eqs. 19-20), shape (R, n, n)."""
    return torch.softmax(logits(FX, FY, tau), dim=-1)


def grad_features(Q: torch.Tensor, FY: torch.Tensor, tau: float, tau_scaled: bool) -> torch.Tensor:
    """dLoss/df(X_k) = (1/n)[(l'_p - 1) f(Y_k) + sum_s l'_s f(Y_s)]  (eq. 21), times 1/tau if not tau-scaled."""
    n = Q.shape[-1]
    eye = torch.eye(n, dtype=Q.dtype, device=Q.device)
    G = (Q - eye) @ FY / n
    return G if tau_scaled else G / tau


def infonce_and_grad(FX: torch.Tensor, FY: torch.Tensor, V: torch.Tensor, tau: float, tau_scaled: bool):
    """Loss (R,), dLoss/df(X) (R,n,m) and mean l'_p (R,) from one pass over the n x n logits (eqs. 3, 19-21).

    Equal to infonce, grad_features(softmax_logits(...), V) and the mean diagonal of the softmax, but the
    logits are formed once and normalised in place, so the step touches the n x n matrix four times, not
    a dozen. V is f(Y) of the full model (faithful eq. 5) or of the masked one (literal backward).
    """
    n = FX.shape[-2]
    lg = (FX / tau if tau != 1 else FX) @ FY.detach().transpose(-1, -2)    # eq. (2)
    mx = lg.amax(dim=-1, keepdim=True)
    pos = torch.diagonal(lg, dim1=-2, dim2=-1) - mx[..., 0]               # copied before lg is overwritten
    E = lg.sub_(mx).exp_()                                                # unnormalised l'
    Z = E.sum(dim=-1)
    loss = (Z.log() - pos).mean(dim=-1)
    pos_prob = (torch.diagonal(E, dim1=-2, dim2=-1) / Z).mean(dim=-1)
    G = ((E @ V) / Z.unsqueeze(-1) - V) / n                               # (1/n)[(l'_p - 1) V_k + sum_s l'_s V_s]
    return loss, (G if tau_scaled else G / tau), pos_prob
