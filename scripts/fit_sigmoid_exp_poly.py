#!/usr/bin/env python3
"""Fit the polynomial of kernels.sigmoidExp (executor/kernels/logistic.go).

e^rho ~ 1 + rho + rho^2 * (c3 + c2 rho + c1 rho^2 + c0 rho^3) on
|rho| <= ln2/2, minimizing the largest relative error (least squares on
Chebyshev points, reweighted toward the largest errors: Lawson's
iteration). Prints the largest relative error of the fit with its
coefficients rounded to float32, then c0..c3 as the Go constants hold
them. Run with a Python that has numpy: /usr/bin/python3 scripts/fit_sigmoid_exp_poly.py
"""
import numpy as np

L = np.log(2) / 2
r = np.cos(np.linspace(0, np.pi, 4001)) * L
with np.errstate(divide="ignore", invalid="ignore"):
    target = (np.exp(r) - 1 - r) / r**2
target[np.abs(r) < 1e-12] = 0.5
A = np.vstack([r**k for k in range(4)]).T
w = np.ones_like(r)
for _ in range(60):
    W = (r**2 / np.exp(r)) * w
    coef, *_ = np.linalg.lstsq(A * W[:, None], target * W, rcond=None)
    err = (A @ coef - target) * r**2 / np.exp(r)
    w = w * (1 + 20 * np.abs(err) / np.abs(err).max())
    w /= w.mean()
c32 = coef.astype(np.float32).astype(np.float64)
err32 = ((A @ c32) * r**2 + 1 + r - np.exp(r)) / np.exp(r)
print("max relative error with float32 coefficients: %.3g" % np.abs(err32).max())
for i, c in enumerate(coef[::-1].astype(np.float32)):
    print("sigExpC%d = %.10e" % (i, c))
