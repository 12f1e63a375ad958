"""Every public function walked over the corners of its documented domain, with a hang guard (issue 25).

``jl.jl_w(1.0, 1e-310, 10, 2)`` never returned (a bracket loop that could not end) and
``sigma_b(100.0, 0.3, 751, 750)`` raised scipy's OverflowError: both inside the documented domain.
Here each public function of ``paper.bounds``, ``exact.best``, the rivals ``gram``, ``gram_to_table``,
``ssp``, ``wishart``, ``jl``, ``trust``, ``compare`` (all of them ``dpmask.rivals`` as
well) and ``exact.two_columns`` is called at both ends of every argument's
documented range (and just past them), their combinations, and arrays that mix them.  Every call
must end in

* a result whose every number is finite (no NaN, no inf), or
* a ValueError / TypeError whose message names one of the function's arguments.

Anything else fails: another exception (OverflowError, RuntimeError, LinAlgError, ...), a NaN
or inf, an unnamed message, or a hang.  The calls run in one subprocess per module; before each
call ``faulthandler.dump_traceback_later`` arms a guard of ``GUARD`` seconds (a hang guard, not a
timing test: the slowest corner takes a few seconds) that dumps the stack and ends the process,
and the parent reports the call that was running.  ``two_columns.masked_sigma_search`` is walked over
its options' corners only up to its validation (its search takes minutes: see SKIPPED).
"""

from __future__ import annotations

import faulthandler
import itertools
import json
import math
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

GUARD = float(os.environ.get("DPMASK_WALK_GUARD", "120"))
HERE = os.path.dirname(os.path.abspath(__file__))

EPS_PKG = (1e-100, 1.0, 1e4)            # the package's domain of eps, its ends and a middle
DELTA_ALL = (1e-300, 1e-5, 0.5, 1 - 1e-12)
EPS_RIVAL = (1e-6, 1.0, 10.0)           # the rivals' calibrations (jl, adassp): [1e-6, 10]
DELTA_RIVAL = (1e-300, 1e-5, 0.49)      # ... 0 < delta < 0.5 (jl: delta >= 1e-300)
NP = ((2, 1), (751, 750), (10**6 + 1, 10**6), (2**53, 1), (2**53, 2**53 - 1))
K2 = [[4.0, 1.0], [1.0, 3.0]]
K_TINY = [[1e-300, 0.0], [0.0, 1e-300]]
K_HUGE = [[1e300, 0.0], [0.0, 1e300]]
K_MAX = [[1.7e308, 0.0], [0.0, 1.7e308]]


def _m(n, p, seed=0, scale=1.0):
    return (scale * np.random.default_rng(seed).uniform(-1, 1, (n, p))).tolist()


def grid(**axes):
    """Every combination of the listed values (dicts of keyword arguments)."""
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[k] for k in names))]


def mixed(**axes):
    """One call with each argument an array of all its corner values (broadcast against the others)."""
    shapes = {}
    out = {}
    for i, (k, v) in enumerate(axes.items()):
        shape = [1] * len(axes)
        shape[i] = len(v)
        out[k] = np.array(v, dtype=float).reshape(shape)
        shapes[k] = shape
    return [out]


def _np_grid(**extra):
    return [dict(n=n, p=p, **e) for n, p in NP for e in grid(**extra)]


def cases():
    """(module, function) -> list of keyword arguments at the corners of the documented domain."""
    C = {}
    # ---------------------------------------------------------------- bounds (Theorems 3.2, 3.4)
    C["bounds", "gaussian_upper_quantile"] = grid(delta=(5e-324, 1e-300, 0.5, 1 - 1e-16)) + mixed(
        delta=(5e-324, 1e-300, 0.5, 1 - 1e-16))
    for f in ("sigma_a_necessary", "sigma_a_sufficient"):
        C["bounds", f] = grid(eps=EPS_PKG, delta=DELTA_ALL) + mixed(eps=EPS_PKG, delta=DELTA_ALL)
    C["bounds", "sigma_a_corollary"] = grid(eps=(1e-100, 0.999), delta=DELTA_ALL, kind=("sufficient", "necessary"))
    C["bounds", "g_b"] = [dict(sigma=s, **kw) for s in (1e-300, 1.0, 1e300)
                          for kw in _np_grid(eps=(1e-100, 1e4), delta=(1e-300, 0.5), corrected=(False, True))]
    C["bounds", "sigma_b"] = _np_grid(eps=EPS_PKG, delta=DELTA_ALL, corrected=(False, True)) + [
        dict(eps=np.array(EPS_PKG)[:, None], delta=np.array(DELTA_ALL)[None, :], n=751, p=750),
        dict(eps=100.0, delta=0.3, n=751, p=750), dict(eps=30.0, delta=0.3, n=10**6 + 1, p=10**6),
        dict(eps=60.0, delta=0.3, n=10**6 + 1, p=10**6)]
    C["bounds", "sigma_b_corollary"] = _np_grid(eps=EPS_PKG, delta=(1e-300, 0.5))
    C["bounds", "sigma_b_block"] = [dict(eps=e, delta=d, block_sizes=b, p=p, corrected=c)
                                    for e in EPS_PKG for d in (1e-300, 0.3, 1 - 1e-12) for c in (False, True)
                                    for b, p in (([2], 1), ([751, 751], 750), ([10**6 + 1], 10**6), ([2**52, 2**52], 3))]
    for f in ("sufficient_sigma",):
        C["bounds", f] = [dict(setting=s, **kw) for s in "ABCD" for kw in _np_grid(eps=(1e-100, 100.0, 1e4),
                                                                                  delta=(1e-300, 0.3))]
    for f in ("best_sufficient_sigma", "best_sufficient_source"):
        C["best", f] = [dict(setting=s, corrected=c, **kw) for s in "ABCD" for c in (False, True)
                          for kw in _np_grid(eps=(1e-100, 100.0, 1e4), delta=(1e-300, 0.3))]
    # ---------------------------------------------------------------- gram (Analyze Gauss)
    C["gram", "gram_sensitivity"] = grid(p=(1, 2, 2**53))
    C["gram", "sigma_gram"] = grid(eps=EPS_PKG, delta=(1e-300, 0.5, 1 - 1e-12), p=(1, 64, 2**53)) + mixed(
        eps=EPS_PKG, delta=(1e-300, 0.5, 1 - 1e-12), p=(1, 64, 2**53))
    C["gram", "gram_noise"] = grid(p=(1, 64), tau=(1e-300, 1.0, 1e100), size=(None, 1, 3), rng=(0,))
    C["gram", "release_gram"] = grid(X=(_m(3, 1), _m(50, 4), [[1.0, -1.0]] * 3), tau=(1e-300, 1.0, 1e100), rng=(0,))
    C["gram", "gram_noise_cov"] = grid(p=(1, 32), tau=(1e-300, 1.0, 1e100))
    C["gram", "mask_noise_cov"] = grid(K=(K2, K_TINY, K_HUGE), n=(1, 2**53), sigma=(1e-300, 1.0, 1e100))
    cov = 0.01 * np.einsum("ac,bd->abcd", np.eye(2), np.eye(2))
    C["gram", "first_order_errors"] = grid(K=(K2, K_HUGE, K_TINY), cov=(cov, 1e100 * cov, 1e-300 * cov),
                                           response=(-1, 0, 1))
    C["gram", "error_coefficients"] = grid(M=(K2, K_HUGE, K_TINY), response=(-2, -1, 0, 1))
    C["gram", "example_moments"] = grid(p=(2, 3, 32))
    C["gram", "sigma_low_large_n"] = grid(eps=EPS_PKG, delta=(1e-300, 0.5, 1 - 1e-12),
                                          n=(3, 1000, 2**53), p=(2, 64)) + [
        dict(eps=1.0, delta=1e-5, n=2**53, p=2**53 - 1)]
    # ---------------------------------------------------------------- field
    C["gram_to_table", "psd_projection"] = grid(K=(K2, K_TINY, K_HUGE, K_MAX, [[1.0, 2.0], [2.0, -1e308]],
                                           [[[1.0, 0.0], [0.0, -1.0]], K2]))
    C["gram_to_table", "gram_table"] = grid(K_tilde=(K2, K_TINY, K_HUGE, K_MAX, [[1.0, 2.0], [2.0, -1e308]]), n=(2, 1000),
                                    rng=(0,))
    C["ssp", "cross_sensitivity"] = grid(k=(1, 63, 2**53))
    C["ssp", "adassp_noise"] = grid(eps=EPS_RIVAL, delta=DELTA_RIVAL, p=(2, 64), composition=("basic", "gaussian"))
    C["ssp", "adassp_from_gram"] = grid(K=(K2, K_TINY, [[1e9, 0.0], [0.0, 1e9]]), eps=EPS_RIVAL,
                                          delta=(1e-300, 0.49), rng=(0,), size=(None, 2), rho=(1e-100, 0.999),
                                          composition=("basic", "gaussian"))
    C["ssp", "adassp"] = grid(Z=(_m(30, 1), _m(3, 2)), y=(np.linspace(-1, 1, 30),), eps=EPS_RIVAL,
                                delta=(1e-300, 0.49), rng=(0,), rho=(0.05,))
    C["ssp", "adassp"] = [c for c in C["ssp", "adassp"] if len(c["Z"]) == 30]
    # issue 23's additions: AdaSSP joint's sensitivity sum, the Wishart mechanism
    C["ssp", "adassp_joint_sum"] = grid(k=(1, 2, 63, 2**53))
    C["wishart", "wishart_scale"] = grid(eps=EPS_RIVAL, delta=DELTA_RIVAL, p=(1, 64), calibration=("delta", "paper"))
    C["wishart", "wishart_delta"] = grid(eps=EPS_RIVAL, c=(1e-300, 1.0, 1e300), p=(1, 64))
    C["wishart", "wishart_mechanism"] = grid(K=(K2, K_TINY, [[1e9, 0.0], [0.0, 1e9]]), eps=EPS_RIVAL,
                                           delta=(1e-300, 0.49), rng=(0,), size=(None, 2),
                                           calibration=("delta", "paper"))
    # ---------------------------------------------------------------- jl
    C["jl", "jl_w"] = grid(eps=EPS_RIVAL, delta=(1e-310, 1e-300, 1e-5, 0.49), r=(1, 10, 10**9), p=(1, 64))
    C["jl", "jl_w_sheffet"] = grid(eps=EPS_RIVAL, delta=(1e-300, 0.49), r=(1, 10**9), p=(1, 64))
    C["jl", "jl_delta"] = grid(eps=EPS_RIVAL, w=(1e-300, 1.0, 1e4, 6e4, 3.5e6, 1e150), r=(1, 10**9), p=(1, 64))
    C["jl", "jl_pair_delta"] = grid(eps=EPS_RIVAL, mu1=(0.0, 1e-12, 1e6), mu2=(0.0, -1e-12, -1 + 1e-12),
                                    r=(1, 1000))
    C["jl", "jl_release"] = grid(X=(_m(5, 1), _m(20, 3)), eps=(2e-6, 1.0, 10.0), delta=(2e-300, 0.49), r=(None, 1, 1000),
                                 rng=(0,), test=(True, False), method=("gram", "dense"))
    S2 = (1000.0 * np.array(K2)).tolist()
    C["jl", "jl_ols_from_gram"] = grid(S=(S2, K_HUGE, [S2, S2]), r=(2, 10**9), w=(0.0, 1e6), altered=(True, False),
                                       response=(-1, 0), debias=(True, False), level=(1e-12, 1 - 1e-12))
    C["jl", "jl_delta_worst_pair"] = grid(eps=EPS_RIVAL, w=(1e-300, 1.0, 1e4, 3.5e6), r=(1, 10**9), p=(1, 64))
    # ---------------------------------------------------------------- trust
    C["trust", "distributed_tau"] = grid(eps=EPS_PKG, delta=(1e-300, 0.5), p=(1, 2**53), dropout=(0.0, 1 - 1e-12),
                                         pad=(0.0, 1 - 1e-12))
    C["trust", "distributed_delta"] = C["trust", "distributed_tau"] + mixed(
        eps=EPS_PKG, delta=(1e-300, 0.5), p=(1, 64), dropout=(0.0, 0.5), pad=(0.0, 0.5))
    C["trust", "distributed_gram"] = grid(X=(_m(3, 1), _m(40, 3)), eps=(1e-100, 1e4), delta=(1e-300, 0.5),
                                          dropout=(0.0, 0.9), rng=(0,), pad=(0.0, 0.9), method=("parties", "sum"))
    C["trust", "trust_costs"] = grid(n=(2, 2**53), p=(1, 2**20))
    C["trust", "masking_dropout_cost"] = grid(eps=EPS_PKG, delta=(1e-300, 0.3), n=(3, 10**4, 2**53), p=(1, 64),
                                              dropout=(0.0, 0.5, 1 - 1e-12), level=("sigma_0", "sigma_low"))
    # the rival's PD event (Proposition 9.5): few draws, every corner of K and tau
    C["gram", "gram_pd_probability"] = grid(K=(K2, K_TINY, K_HUGE), tau=(1e-300, 1.0, 1e100), draws=(1, 200), rng=(0,))
    # ---------------------------------------------------------------- compare (fast corners: large_n sigma_low)
    kinds_fast = ("A", "B0", "gram", "gram_table", "adassp", "adassp_joint", "jl", "jl_always")
    C["compare", "noise_levels"] = grid(eps=EPS_RIVAL, delta=(2e-300, 0.49), n=(3, 10**9), p=(2, 32),
                                        r=(None, 1), low=("large_n",)) + [
        dict(eps=1.0, delta=1e-5, n=10**4, p=2, kinds=("Blow",)), dict(eps=1.0, delta=1e-310, n=100, p=2)]
    for c in C["compare", "noise_levels"]:
        c.setdefault("kinds", kinds_fast)
    C["compare", "first_order_rmse"] = [dict(kind=k, K=(1e4 * np.array(K2)).tolist(), n=10**4, eps=e, delta=d)
                                        for k in ("A", "B0", "gram", "adassp", "jl", "jl_always")
                                        for e in (1e-6, 10.0) for d in (2e-300, 0.49)]
    C["compare", "compare_from_gram"] = [dict(K=(1e4 * np.array(K2)).tolist(), n=10**4, eps=e, delta=d, reps=2, rng=0,
                                              kinds=kinds_fast, low="large_n", r=r)
                                         for e in (1e-6, 10.0) for d in (2e-300, 0.49) for r in (None, 3)]
    C["compare", "compare_mechanisms"] = [dict(X=_m(50, 3), eps=e, delta=d, reps=2, rng=0, kinds=kinds_fast,
                                               low="large_n") for e in (1e-6, 10.0) for d in (2e-300, 0.49)]
    C["compare", "first_order_margin"] = [dict(kind=k, K=(1e4 * np.array(K2)).tolist(), n=n, eps=e, delta=d)
                                          for k in ("A", "B0", "gram", "adassp", "jl", "jl_always", "wishart")
                                          for n in (3, 10**4) for e in (1e-6, 10.0) for d in (2e-300, 0.49)]
    # ---------------------------------------------------------------- wishart (Setting B, p = 2)
    C["two_columns", "log_hyp0f1_2x2"] = grid(b=(1.5, 5e6), z1=(0.0, 1e-300, 1e12), z2=(0.0, 1e-300, 1e12))
    C["two_columns", "wishart_log_ratio"] = grid(T=(K2, K_TINY), n=(3, 10**4), K=(K2, [[0.0, 0.0], [0.0, 0.0]]),
                                             K_prime=(K2,), sigma=(1e-3, 1.0, 1e100))
    C["two_columns", "sample_wishart_2x2"] = grid(n=(2, 3, 10**7), Lambda=(K2, [[0.0, 0.0], [0.0, 0.0]], K_HUGE),
                                              size=(1, 3), rng=(0,))
    C["two_columns", "gram_pair"] = grid(x=([1.0, 1.0], [0.0, 0.0], [1.0, -1.0]), x_prime=([0.0, 0.0], [1.0, 1.0]),
                                     shared=(None, K2))
    C["two_columns", "projection_pair"] = [dict()]
    C["two_columns", "orthogonal_pair"] = grid(n=(3, 10**4, 2**53), s=(0.0, 1.0))
    C["two_columns", "orthogonal_family_sigma"] = grid(eps=(1e-4, 100.0), delta=(1e-100, 0.5), n=(3, 1000))
    C["two_columns", "masked_pair_log_delta"] = grid(eps=(1e-4, 100.0), sigma=(0.5, 1e100), n=(3, 1000), K=(K2,),
                                                 K_prime=([[1.0, 0.0], [0.0, 1.0]],), n_samples=(200,), rng=(0,),
                                                 confidence=(1e-12, 1 - 1e-12))
    # masked_sigma_search: its options at and past their ends (each refused before the search starts)
    C["two_columns", "masked_sigma_search"] = [{**dict(eps=1.0, delta=1e-5, n=100), **o} for o in (
        dict(confidence=0.0), dict(confidence=1.0), dict(confidence=True), dict(confidence=2), dict(top=0),
        dict(top=True), dict(n_samples=199), dict(screen_samples=2**24), dict(rng=True), dict(pairs=[]),
        dict(pairs="x"), dict(eps=[1.0, 2.0]), dict(n=2), dict(p=3))]
    return C


SKIPPED = {
    ("two_columns", "masked_sigma_search"): "a Monte Carlo search over candidate pairs (minutes per call): walked over "
                                        "its options' refusals only",
    ("compare", "simulate_slopes"): "walked through compare_from_gram (every kind)",
    ("compare", "summarise"): "a summary of simulate_slopes' draws (no domain of its own)",
    ("jl", "jl_ols"): "jl_ols_from_gram on the table of a JLRelease: walked through jl_ols_from_gram",
    ("ssp", "AdasspResult"): "a named tuple",
    ("jl", "JLRelease"): "a named tuple",
    ("jl", "JLFit"): "a named tuple",
    ("trust", "DistributedGram"): "a named tuple",
    ("trust", "MaskingDropout"): "a named tuple",
    ("gram", "PDProbability"): "a named tuple",
    ("compare", "rmse_reported"): "reads a summarise row (no domain of its own)",
}
#: The walked modules, by the short name of the cases' keys: their place in the package.
MODULES = {"bounds": "paper.bounds", "best": "exact.best", "gram": "rivals.gram", "gram_to_table": "rivals.gram_to_table",
           "ssp": "rivals.ssp", "wishart": "rivals.wishart", "jl": "rivals.jl",
           "trust": "rivals.trust", "compare": "rivals.compare", "two_columns": "exact.two_columns"}
#: Non-finite values a function documents, dropped before the check: the debiased JL fit's intervals
#: are normal (df = inf); the engine's fractions that do not apply to a mechanism are NaN (coverage
#: without intervals, positive definiteness without a Gram matrix); a log delta estimate may be -inf.
_NOT_APPLICABLE = ("coverage", "coverage_se", "not_pd", "not_pd_block")


def _drop_documented(key, result):
    if key == ("jl", "jl_ols_from_gram"):
        return {k: v for k, v in result._asdict().items() if k != "df"}
    if key in (("compare", "compare_from_gram"), ("compare", "compare_mechanisms")):
        return {kind: {k: v for k, v in row.items() if not (k in _NOT_APPLICABLE and isinstance(v, float)
                                                            and math.isnan(v))} for kind, row in result.items()}
    if key == ("two_columns", "masked_pair_log_delta"):
        return [v for v in _numbers(result) if v != -math.inf]
    return result


# --------------------------------------------------------------------------- the worker


def _numbers(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _numbers(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _numbers(v)
    elif isinstance(obj, (bool, np.bool_, str)) or obj is None:
        return
    elif isinstance(obj, (int, float, np.number, np.ndarray)):
        arr = np.asarray(obj)
        if arr.dtype.kind in "fiuc":
            yield from np.ravel(arr)


def _names_an_argument(message, names):
    return any(re.search(rf"(?<![A-Za-z_]){re.escape(n)}(?![A-Za-z_])", message) for n in names)


def _argnames(fn):
    import inspect
    return set(inspect.signature(fn).parameters)


def _short(kwargs):
    def one(v):
        if isinstance(v, np.ndarray):
            return f"array{v.shape}"
        if isinstance(v, list) and len(str(v)) > 60:
            return f"list[{len(v)}]"
        return repr(v)
    return "(" + ", ".join(f"{k}={one(v)}" for k, v in kwargs.items()) + ")"


def run_module(module):
    """Call every case of *module* with the hang guard armed; one JSON line per call on stdout."""
    import importlib

    mod = importlib.import_module(f"dpmask.{MODULES[module]}")
    faulthandler.enable()
    for (m, name), calls in cases().items():
        if m != module:
            continue
        fn = getattr(mod, name)
        names = _argnames(fn)
        for kwargs in calls:
            label = f"{m}.{name}{_short(kwargs)}"
            print(json.dumps({"start": label}), flush=True)
            faulthandler.dump_traceback_later(GUARD, exit=True)
            verdict = "ok"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = fn(**kwargs)
            except (ValueError, TypeError) as exc:
                verdict = "named" if _names_an_argument(str(exc), names) else f"unnamed {type(exc).__name__}: {exc}"
            except Exception as exc:  # noqa: BLE001 - the point of the walk
                verdict = f"raised {type(exc).__name__}: {exc}"
            else:
                for v in _numbers(_drop_documented((m, name), result)):
                    if np.iscomplexobj(v) or not math.isfinite(float(v)):
                        verdict = f"returned {v!r}"
                        break
            finally:
                faulthandler.cancel_dump_traceback_later()
            print(json.dumps({"call": label, "verdict": verdict}), flush=True)


def _walk(module):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    code = f"import sys; sys.path.insert(0, {HERE!r}); import test_domain_walk as t; t.run_module({module!r})"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=3600)
    verdicts, started = [], None
    for line in proc.stdout.splitlines():
        rec = json.loads(line)
        if "start" in rec:
            started = rec["start"]
        else:
            verdicts.append((rec["call"], rec["verdict"]))
            started = None
    return proc, verdicts, started


# --------------------------------------------------------------------------- the tests


def test_every_public_function_has_corners():
    import importlib

    have = set(cases())
    missing = []
    for module in MODULES:
        mod = importlib.import_module(f"dpmask.{MODULES[module]}")
        for name in mod.__all__:
            if callable(getattr(mod, name)) and (module, name) not in have and (module, name) not in SKIPPED:
                missing.append(f"{module}.{name}")
    rivals = importlib.import_module("dpmask.rivals")
    for name in rivals.__all__:  # the facade re-exports functions walked under their own module
        obj = getattr(rivals, name)
        if callable(obj) and not any(getattr(importlib.import_module(f"dpmask.{path}"), name, None) is obj
                                     for path in MODULES.values()):
            missing.append(f"rivals.{name}")
    assert not missing, f"no corners for {missing}"


@pytest.mark.slow  # about three minutes in all (a subprocess per module): make test-slow (and CI) runs it
@pytest.mark.parametrize("module", MODULES)
def test_corners_answer_or_refuse_by_name_without_hanging(module):
    proc, verdicts, started = _walk(module)
    assert started is None, (f"{started} did not return within {GUARD:g} s (hang guard) or killed the process "
                             f"(exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert verdicts, "no calls made"
    bad = [f"{call}: {v}" for call, v in verdicts if v not in ("ok", "named")]
    assert not bad, f"{len(bad)} of {len(verdicts)} calls:\n" + "\n".join(bad[:20])
    # the corners are inside the domain (or just past an end): most calls must answer
    answered = sum(v == "ok" for _, v in verdicts)
    assert answered >= len(verdicts) // 3, f"only {answered} of {len(verdicts)} calls answered"
