"""Per-rank memory as a function of the rank count p: the laws HPC memory follows,
fitted by least squares, one chosen by held-out checks, with 95% prediction intervals
(`heapscope scaling`; the method is explained in docs/scaling.md).

Laws (y: per-rank memory at p ranks; a: what a rank holds whatever p):
  constant     y = a                      code, fixed tables, replicated data
  1/p          y = a + b/p                a rank's share of a fixed problem (its domain)
  log p        y = a + b log2 p           tree collectives, hierarchical tables
  p            y = a + b p                per-peer tables and buffers
  p log p      y = a + b p log2 p         per-peer buffers of tree algorithms
  p^2          y = a + b p^2              a p x p table on every rank (totals of all pairs)
  1/p + p      y = a + b/p + c p          a domain share and per-peer tables
  1/p + log p  y = a + b/p + c log2 p     a domain share and tree collectives
Each law is linear in its coefficients: ordinary least squares on its terms. A law whose
term comes out with a coefficient <= 0 does not describe the data (the memory does not
shrink or grow that way) and is dropped.

Held-out checks: a law of k coefficients needs k + 1 rank counts; it is fitted once per
rank count left out (with every run at it: repeated runs add points, not checks) and
predicts that one; its held-out error is the root mean square of
those misses. The laws within twice the best error, or within the noise floor (1% of the
mean figure), fit equally well; of them the one with the fewest coefficients is chosen
(then the smallest error). Another law of that set whose prediction at a requested rank
count falls outside the chosen law's interval is a rival: they fit equally well and
predict differently, and both are said.

Interval: the 95% prediction interval of least squares on the law's terms,
  y0 +- t(0.975, n - k) s sqrt(1 + x0' (X'X)^-1 x0),  s^2 = residual sum of squares / (n - k),
for a new run at p0 if the law holds and the runs' deviations are independent with one
variance; the low end is kept at 0 (memory is not negative). Student's t quantile comes
from its exact distribution function for whole degrees of freedom (student_t_quantile):
that is all this needs beyond numpy.
"""
import math
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

CONFIDENCE = 0.95
NOISE_FLOOR = 0.01        # of the mean figure: held-out errors below it are noise
EQUAL_FACTOR = 2.0        # within this factor of the best held-out error: fits as well


@dataclass(frozen=True)
class Law:
    name: str
    formula: str
    terms: Tuple[Callable[[np.ndarray], np.ndarray], ...]   # besides the constant a
    meaning: str

    @property
    def coefficients(self) -> int:
        return 1 + len(self.terms)

    def design(self, p) -> np.ndarray:
        p = np.asarray(p, dtype=float)
        return np.column_stack([np.ones_like(p)] + [t(p) for t in self.terms])


def _inv(p):
    return 1.0 / p


def _log(p):
    return np.log2(p)


def _lin(p):
    return p


def _plog(p):
    return p * np.log2(p)


def _sq(p):
    return p * p


LAWS = (
    Law("constant", "a", (), "the same on every rank count (code, fixed tables, replicated data)"),
    Law("1/p", "a + b/p", (_inv,), "a share of a fixed problem (a domain) on top of a fixed part"),
    Law("log p", "a + b*log2(p)", (_log,), "grows with the depth of a tree (collectives)"),
    Law("p", "a + b*p", (_lin,), "grows with the peers (per-peer tables and buffers)"),
    Law("p log p", "a + b*p*log2(p)", (_plog,), "per-peer buffers of tree algorithms"),
    Law("p^2", "a + b*p^2", (_sq,), "a p x p table on every rank"),
    Law("1/p + p", "a + b/p + c*p", (_inv, _lin), "a domain share and per-peer tables"),
    Law("1/p + log p", "a + b/p + c*log2(p)", (_inv, _log), "a domain share and tree collectives"),
)
LAW_NAMES = tuple(law.name for law in LAWS)


def student_t_quantile(q: float, dof: int) -> float:
    """Student's t quantile for whole degrees of freedom, 0.5 < q < 1: bisection on the
    exact distribution function (Abramowitz and Stegun 26.7.3-26.7.4, sums of powers of
    cos(atan(t / sqrt(dof))))."""
    if dof < 1 or not 0.5 < q < 1:
        raise ValueError(f"t quantile of {q} with {dof} degrees of freedom")
    target = 2 * q - 1           # P(|T| <= t)
    lo, hi = 0.0, 1.0
    while _t_central(hi, dof) < target:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_central(mid, dof) < target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * hi:
            break
    return (lo + hi) / 2


def _t_central(t: float, dof: int) -> float:
    """P(|T| <= t) for Student's t with `dof` (a whole number) degrees of freedom."""
    theta = math.atan(t / math.sqrt(dof))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if dof % 2:      # odd: 2/pi (theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 ...))
        total, term = 0.0, 1.0
        for k in range(1, (dof - 1) // 2 + 1):
            if k > 1:
                term *= c2 * (2 * k - 2) / (2 * k - 1)
            total += term
        return 2 / math.pi * (theta + s * math.cos(theta) * total) if dof > 1 else 2 / math.pi * theta
    total, term = 1.0, 1.0   # even: sin (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 ...)
    for k in range(1, dof // 2):
        term *= c2 * (2 * k - 1) / (2 * k)
        total += term
    return s * total


@dataclass
class Fit:
    law: Law
    coef: np.ndarray
    points: int
    residual_sd: Optional[float]       # None: as many points as coefficients
    xtx_inv: np.ndarray
    held_out: Optional[float] = None   # root mean square of the held-out misses

    @property
    def dof(self) -> int:
        return self.points - self.law.coefficients

    def predict(self, p: float) -> float:
        return float(self.law.design([p])[0] @ self.coef)

    def interval(self, p: float) -> Optional[Tuple[float, float]]:
        """The 95% prediction interval at p, low end kept at 0; None without degrees of
        freedom."""
        if self.dof < 1 or self.residual_sd is None:
            return None
        x = self.law.design([p])[0]
        half = (student_t_quantile(0.5 + CONFIDENCE / 2, self.dof) * self.residual_sd
                * math.sqrt(1 + float(x @ self.xtx_inv @ x)))
        y = self.predict(p)
        return max(0.0, y - half), y + half


def fit(law: Law, p: Sequence[float], y: Sequence[float]) -> Optional[Fit]:
    """The least-squares fit of `law`; None when it has fewer points than coefficients,
    its terms are not independent at these rank counts, or a term's coefficient is <= 0."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    k = law.coefficients
    if len(p) < k:
        return None
    X = law.design(p)
    if np.linalg.matrix_rank(X) < k:
        return None
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    if any(c <= 0 for c in coef[1:]):
        return None
    resid = y - X @ coef
    dof = len(p) - k
    sd = math.sqrt(float(resid @ resid) / dof) if dof > 0 else None
    return Fit(law, coef, len(p), sd, np.linalg.inv(X.T @ X))


def held_out_error(law: Law, p: np.ndarray, y: np.ndarray) -> Optional[float]:
    """Root mean square of the misses of `law` fitted without each rank count in turn (every
    run at it: repeated runs are not checked against their twins); None when a fit without
    one has fewer points than coefficients (or is dropped)."""
    misses = []
    for count in np.unique(p):
        rest = p != count
        f = fit(law, p[rest], y[rest])
        if f is None:
            return None
        misses += [f.predict(count) - v for v in y[~rest]]
    return math.sqrt(sum(m * m for m in misses) / len(misses))


@dataclass
class Choice:
    status: str                       # "chosen", "too-few-points", "no-points"
    chosen: Optional[Fit] = None
    rivals: List[Fit] = field(default_factory=list)      # fit as well, predict differently
    equal: List[Fit] = field(default_factory=list)       # fit as well, predict alike
    checked: List[Fit] = field(default_factory=list)     # every law with a held-out error
    unchecked: List[str] = field(default_factory=list)   # laws with too few rank counts
    exact: List[Fit] = field(default_factory=list)       # too few points: laws through them


def choose(p: Sequence[float], y: Sequence[float], targets: Sequence[float] = (),
           laws: Sequence[Law] = LAWS) -> Choice:
    """The law of y(p) chosen by held-out checks (the module's docstring); targets: the
    rank counts predicted, where rivals are told apart."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(p) == 0:
        return Choice("no-points")
    counts = len(np.unique(p))
    checked, unchecked = [], []
    for law in laws:
        if counts < law.coefficients + 1:
            unchecked.append(law.name)
            continue
        f = fit(law, p, y)
        if f is None:
            continue
        f.held_out = held_out_error(law, p, y)
        if f.held_out is not None:
            checked.append(f)
    floor = NOISE_FLOOR * float(np.mean(np.abs(y)))
    if not checked:
        exact = [f for f in (fit(law, p, y) for law in laws) if f is not None
                 and f.law.coefficients == counts]
        return Choice("too-few-points", unchecked=unchecked, exact=exact)
    best = min(f.held_out for f in checked)
    equal = [f for f in checked if f.held_out <= max(EQUAL_FACTOR * best, floor)]
    chosen = min(equal, key=lambda f: (f.law.coefficients, f.held_out))
    if counts == 2 and chosen.held_out > floor:
        # two rank counts that differ: only the constant law could be checked, and it misses
        exact = [f for f in (fit(law, p, y) for law in laws) if f is not None
                 and f.law.coefficients == counts]
        return Choice("too-few-points", checked=checked, unchecked=unchecked, exact=exact)
    rivals, alike = [], []
    for f in equal:
        if f is chosen:
            continue
        (rivals if any(_apart(chosen, f, t) for t in targets) else alike).append(f)
    return Choice("chosen", chosen, rivals, alike, checked, unchecked)


def _apart(a: Fit, b: Fit, p: float) -> bool:
    """Whether a and b predict differently at p: each prediction outside the other's
    interval (without an interval: more than the noise floor apart)."""
    ya, yb = a.predict(p), b.predict(p)
    ia, ib = a.interval(p), b.interval(p)
    if ia is None or ib is None:
        return abs(ya - yb) > NOISE_FLOOR * max(abs(ya), abs(yb))
    return not (ia[0] <= yb <= ia[1]) and not (ib[0] <= ya <= ib[1])


def first_above(f: Callable[[float], float], limit: float, start: int,
                upto: int = 1 << 30) -> Optional[int]:
    """The smallest rank count >= start where f(p) > limit, looking up to `upto` (doubling,
    then bisecting the first step that crosses); None when f stays at or below it."""
    if f(start) > limit:
        return start
    lo = start
    hi = start * 2 if start > 0 else 1
    while f(hi) <= limit:
        lo, hi = hi, hi * 2
        if hi > upto:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if f(mid) > limit:
            hi = mid
        else:
            lo = mid
    return hi
