r"""Public real data that ships inside a pip wheel, scaled into [-1, 1]^p by a public bound.

The data set is the RAND Health Insurance Experiment extract that statsmodels
ships (``statsmodels.datasets.randhie``; 20,190 person-years, 10 variables).
statsmodels states its licence as "This is in the public domain." and its
source as the RAND Corporation's Health Insurance Experiment, as used in
Cameron and Trivedi (2005), *Microeconometrics: Methods and Applications*
(Cambridge), obtained from their book's data page.  It is read from the
installed wheel: nothing is downloaded.

Differential privacy asks the bound on the data to be public: it must not be
read off the data (a min/max taken from the data would itself leak).  Every
column here is scaled by a range fixed before looking at the data
(:data:`RANDHIE_BOUNDS`):

* ``lncoins`` = ln(coinsurance + 1) with 0 <= coinsurance <= 100 (statsmodels'
  documentation): the range [0, ln 101];
* ``idp``, ``physlm``, ``hlthg``, ``hlthf``, ``hlthp`` are indicators (0 or 1;
  ``physlm`` holds some imputed fractions, still in [0, 1]): the range [0, 1];
* the response is ``log(1 + mdvis)``, the log of the number of outpatient
  visits to a doctor in the year.  No upper bound is documented; the book
  fixes one visit a day, 365 a year, before looking at the data: the range
  [0, ln 366].  Rows above it would be clipped (none is).

A value v in [lo, hi] becomes ``2 (v - lo)/(hi - lo) - 1``; anything outside is
clipped to [-1, 1] and counted.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["RANDHIE_BOUNDS", "RANDHIE_ROWS", "DataInfo", "load_randhie"]

#: Public ranges of the offered columns (see the module docstring for their sources).
RANDHIE_BOUNDS = {
    "lncoins": (0.0, float(np.log(101.0))),
    "idp": (0.0, 1.0),
    "physlm": (0.0, 1.0),
    "hlthg": (0.0, 1.0),
    "hlthf": (0.0, 1.0),
    "hlthp": (0.0, 1.0),
    "log1p_mdvis": (0.0, float(np.log(366.0))),
}
#: Rows of the extract, as documented by statsmodels.
RANDHIE_ROWS = 20190


class DataInfo(NamedTuple):
    """What :func:`load_randhie` did: the bounds used and how many rows were clipped."""

    bounds: dict
    n_clipped: int
    source: str
    licence: str


def _scale(v, lo, hi):
    return 2.0 * (v - lo) / (hi - lo) - 1.0


def load_randhie(predictors=("lncoins", "idp", "physlm", "hlthp"), *, return_info=False):
    r"""The RAND HIE extract as an n x p array in [-1, 1]^p: predictors, then log doctor visits.

    Parameters
    ----------
    predictors : sequence of str
        Columns among ``lncoins``, ``idp``, ``physlm``, ``hlthg``, ``hlthf``,
        ``hlthp``, without repetition (at least one).  The response
        ``log1p_mdvis`` is always the last column, so p = len(predictors) + 1.
    return_info : bool
        Also return a :class:`DataInfo` (bounds, rows clipped, source, licence).

    Returns
    -------
    X : ndarray, shape (20190, p)
        Entries in [-1, 1], scaled by the public bounds :data:`RANDHIE_BOUNDS`.
    names : list of str
        Column names, the response last.
    info : DataInfo
        Only with ``return_info=True``.

    Raises
    ------
    ValueError
        On an unknown or repeated column.
    ImportError
        If statsmodels is not installed (``pip install statsmodels``).

    Examples
    --------
    >>> X, names = load_randhie(("lncoins",))
    >>> X.shape, names
    ((20190, 2), ['lncoins', 'log1p_mdvis'])
    """
    if isinstance(predictors, str):
        raise ValueError("predictors must be a sequence of column names, not one string")
    if not isinstance(return_info, (bool, np.bool_)):   # _validate.check_flag's rule (data.py sits below it)
        raise TypeError(f"return_info must be True or False, got {return_info!r}")
    predictors = list(predictors)
    allowed = [c for c in RANDHIE_BOUNDS if c != "log1p_mdvis"]
    if not predictors or len(set(predictors)) != len(predictors) or any(c not in allowed for c in predictors):
        raise ValueError(f"predictors must be distinct names among {allowed}, got {predictors!r}")
    from statsmodels.datasets import randhie

    frame = randhie.load_pandas().data
    cols = [frame[c].to_numpy(dtype=float) for c in predictors]
    cols.append(np.log1p(frame["mdvis"].to_numpy(dtype=float)))
    names = predictors + ["log1p_mdvis"]
    raw = np.column_stack(cols)
    lo = np.array([RANDHIE_BOUNDS[c][0] for c in names])
    hi = np.array([RANDHIE_BOUNDS[c][1] for c in names])
    X = _scale(raw, lo, hi)
    outside = np.any(np.abs(X) > 1.0, axis=1)
    X = np.clip(X, -1.0, 1.0)
    if not return_info:
        return X, names
    info = DataInfo({c: RANDHIE_BOUNDS[c] for c in names}, int(outside.sum()),
                    " ".join(randhie.SOURCE.split()), randhie.COPYRIGHT.strip())
    return X, names, info
