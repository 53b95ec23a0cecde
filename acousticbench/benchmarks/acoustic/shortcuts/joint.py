"""The joint shortcut test: an L2-regularised logistic regression over every non-attribute cue of a task at once."""
# Features are standardised on train; the penalty is chosen by 5-fold cross-validation on train alone, the model is
# refitted on all of train and scored once on eval. A pair question's row is clip 1 minus clip 2, so the decision
# w . (x1 - x2) + b is antisymmetric up to b: the fit can use any linear combination of the cues, which is how it
# finds a difference of two features that cancels a rove (overall minus sounding level) even when neither alone answers.

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

PENALTIES = (0.1, 1.0, 10.0, 100.0)
FOLDS = 5


def fit(x: np.ndarray, is_a: np.ndarray, penalty: float) -> np.ndarray:
    """Weights (intercept last) minimising the logistic loss plus penalty/2 |w|^2 (the intercept unpenalised)."""
    design = np.column_stack([x, np.ones(len(x))])
    sign = np.where(is_a, 1.0, -1.0)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        margin = sign * (design @ w)
        value = np.sum(np.logaddexp(0.0, -margin)) + 0.5 * penalty * np.sum(w[:-1] ** 2)
        grad = design.T @ (-sign / (1.0 + np.exp(margin)))
        grad[:-1] += penalty * w[:-1]
        return float(value), grad

    return minimize(loss, np.zeros(design.shape[1]), jac=True, method="L-BFGS-B").x


def accuracy(w: np.ndarray, x: np.ndarray, is_a: np.ndarray) -> float:
    score = x @ w[:-1] + w[-1]
    return float(np.mean(np.where(score == 0, 0.5, (score > 0) == is_a)))


def standardised(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Every matrix centred and scaled by train's column statistics; a constant column on train is dropped."""
    mean, std = train.mean(axis=0), train.std(axis=0)
    keep = std > 1e-12
    return [(m[:, keep] - mean[keep]) / std[keep] for m in (train, *others)]


def chosen_penalty(x: np.ndarray, is_a: np.ndarray) -> float:
    """The penalty of the best mean cross-validated accuracy on train (the stronger penalty on a tie)."""
    folds = np.arange(len(x)) % FOLDS
    scores = []
    for penalty in PENALTIES:
        per_fold = []
        for k in range(FOLDS):
            inside, held = folds != k, folds == k
            train_x, held_x = standardised(x[inside], x[held])
            per_fold.append(accuracy(fit(train_x, is_a[inside], penalty), held_x, is_a[held]))
        scores.append(np.mean(per_fold))
    best = max(scores)
    return max(p for p, s in zip(PENALTIES, scores) if s >= best - 1e-12)


def joint_accuracy(train: tuple[np.ndarray, np.ndarray], evaluation: tuple[np.ndarray, np.ndarray]) -> tuple[float, float]:
    """(eval accuracy, chosen penalty) of the logistic fit on train's rows; (0.5, 0) with no usable column."""
    (train_x, train_y), (eval_x, eval_y) = train, evaluation
    train_x, eval_x = standardised(train_x, eval_x)
    if train_x.shape[1] == 0:
        return 0.5, 0.0
    penalty = chosen_penalty(train_x, train_y)
    return accuracy(fit(train_x, train_y, penalty), eval_x, eval_y), penalty
