"""Argument checks shared by every public function of :mod:`dpmask`.

Each checker takes the value and the argument's name, converts it to a float
array, and raises a :class:`ValueError` that names the argument and the allowed
range when a value falls outside it.  Nothing downstream has to guard against
NaN or silently wrong input again.

The rule every public function of the package follows (its docstring states the
domain): inside the documented domain the answer is finite and accurate to a
stated tolerance; outside it a :class:`ValueError` names the argument and the
range, or a :class:`TypeError` names an argument of the wrong kind (complex,
text, objects).  Arguments that do not broadcast together raise a
:class:`ValueError` naming them (:func:`broadcast_named`).  Counts (rows n,
columns p, block sizes, degrees of freedom) are whole numbers at most
``COUNT_MAX`` = 2**53, the largest range in which a float holds every
whole number exactly; a larger whole number is refused, not rounded to 2**53.

What is not a number: text (``"0.1"``, even where numpy would parse it) is
refused by every number check with a :class:`ValueError`, as any other
non-number; a bool (``True`` is not the number 1, nor a seed) with a
:class:`TypeError`; a flag must be a bool (:func:`check_flag`, a
:class:`TypeError` otherwise), not a string such as ``"no"``.  The privacy parameter eps has one domain for
the whole package, ``EPS_DOMAIN`` = [1e-100, 1e4] (:func:`check_eps`); a
function may accept less (a theorem that needs eps < 1, the noncentral
chi-square curves' [1e-4, 100]) and says so.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = [
    "as_float_array",
    "check_eps",
    "check_delta",
    "check_sigma",
    "check_positive",
    "check_n_p",
    "check_int",
    "scalar_or_array",
    "as_rng",
    "check_matrix",
    "check_block_sizes",
    "broadcast_named",
    "check_scalar",
    "check_single_sigma",
    "check_flag",
    "COUNT_MAX",
    "EPS_DOMAIN",
]

#: Largest count (n, p, block size) any function accepts: every whole number up
#: to 2**53 is exact in a float64, and no data set comes near it.
COUNT_MAX = 2**53

#: The package's domain of eps: above 1e4 the analytic Gaussian curve, 1/(2 sigma) - eps sigma,
#: cancels beyond double precision (sigma ~ 1/sqrt(2 eps) to within eps**-0.5 relative), and
#: below 1e-100 sigma**2 overflows in the bounds.  Every function that takes eps accepts it here
#: unless its docstring names a narrower range.
EPS_DOMAIN = (1e-100, 1e4)

_TEXT = (str, bytes, np.str_, np.bytes_)
_BOOL = (bool, np.bool_)


def _refuse_complex(value, name):
    try:
        is_complex = isinstance(value, complex) or np.iscomplexobj(value)
    except (TypeError, ValueError) as exc:  # ragged nesting: numpy cannot even look at it
        raise ValueError(f"{name} must be a real number or a regular (non-ragged) array of real numbers") from exc
    if is_complex:
        raise TypeError(f"{name} must be real, got a complex value (dropping the imaginary part is not done silently)")


def _refuse_text_and_bools(value, name):
    """An error naming *name* if *value* is, or holds, text (ValueError, as any non-number) or a bool
    (TypeError: a bool is not a number here).

    numpy would turn ``"0.1"`` into 0.1 and ``True`` into 1.0; the package does not.
    """
    if isinstance(value, _TEXT):
        raise ValueError(f"{name} must be a real number or an array of real numbers, got the text {value!r} "
                         "(text is not read as a number)")
    if isinstance(value, _BOOL):
        raise TypeError(f"{name} must be a number, got the bool {value!r} (a bool is not a number)")
    if isinstance(value, np.ndarray):
        kind = value.dtype.kind
        if kind in "US":
            raise ValueError(f"{name} must be a real number or an array of real numbers, got an array of text "
                             f"(dtype {value.dtype}; text is not read as a number)")
        if kind == "b":
            raise TypeError(f"{name} must hold numbers, got an array of bools (a bool is not a number)")
        if kind == "O":
            for item in value.flat:
                _refuse_text_and_bools(item, name)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _refuse_text_and_bools(item, name)


def as_float_array(value, name):
    """Convert *value* to a float64 array; refuse complex and non-numeric input (text, bools).

    A ``numpy.ma`` array with a masked entry is refused by name: ``np.asarray`` would drop its mask
    and compute with the hidden values underneath.  One with no masked entry is taken as its data.
    """
    if isinstance(value, np.ma.MaskedArray):
        if np.any(np.ma.getmaskarray(value)):
            raise ValueError(f"{name} is a masked array with masked entries; masks are not honoured here, "
                             f"pass the values to use (e.g. {name}.compressed() or {name}.filled(...))")
        value = np.ma.getdata(value)
    _refuse_text_and_bools(value, name)
    _refuse_complex(value, name)
    return _to_float(value, name, f"{name} must be a real number or an array of real numbers, got {value!r}")


def check_flag(value, name):
    """A flag must be True or False (a numpy bool too); anything else is a TypeError naming it.

    ``"no"`` is truthy in Python and ``0`` or ``None`` pass for False only by accident: a flag
    that changes a privacy bound is not guessed from them.
    """
    if not isinstance(value, _BOOL):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _to_float(value, name, message):
    """np.asarray(value, float), but a complex entry inside a list is a TypeError, not a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            return np.asarray(value, dtype=float)
        except np.exceptions.ComplexWarning as exc:
            raise TypeError(f"{name} must be real, got a complex entry") from exc
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(message) from exc


def broadcast_named(**arrays):
    """np.broadcast_arrays, but a shape mismatch names the arguments and their shapes."""
    try:
        return np.broadcast_arrays(*arrays.values())
    except ValueError as exc:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"arguments {', '.join(arrays)} must broadcast together, got shapes {shapes}") from exc


def _first_bad(arr, bad):
    """Return the first offending value of *arr* where *bad* is true."""
    return float(np.broadcast_to(np.asarray(arr), np.shape(bad))[np.asarray(bad)].flat[0])


def _check_range(arr, name, lower, top):
    lo = 0.0 if lower is None else lower
    hi = np.inf if top is None else top
    bad = (arr < lo) | (arr > hi)
    if np.any(bad):
        left = "(0" if lower is None else f"[{lo:g}"
        raise ValueError(
            f"{name} must lie in {left}, {hi:g}] (the domain where this function is accurate), "
            f"got {_first_bad(arr, bad)!r}"
        )


def check_eps(eps, name="eps", *, upper=None, hypothesis="", lower=EPS_DOMAIN[0], top=EPS_DOMAIN[1]):
    """Check eps in the package's domain [1e-100, 1e4] (and eps < *upper* when a theorem requires it).

    *lower* and *top* narrow the numerical domain [lower, top] where a function is finite
    and accurate (outside it a ValueError names eps); by default the package's
    ``EPS_DOMAIN``.
    """
    arr = as_float_array(eps, name)
    bad = ~np.isfinite(arr) | (arr <= 0)
    if np.any(bad):
        raise ValueError(f"{name} must be finite and > 0, got {_first_bad(arr, bad)!r}")
    if lower is not None or top is not None:
        _check_range(arr, name, lower, top)
    if upper is not None:
        bad = arr >= upper
        if np.any(bad):
            raise ValueError(
                f"{name} must be < {upper}{hypothesis}, got {_first_bad(arr, bad)!r}"
            )
    return arr


def check_delta(delta, name="delta", *, upper=1.0, hypothesis="", lower=0.0, lower_reason=""):
    """Check 0 < delta < *upper* (1 by default; a theorem may ask for less), and delta >= *lower*
    when a numerical method needs it (*lower_reason* says why)."""
    arr = as_float_array(delta, name)
    bad = ~np.isfinite(arr) | (arr <= 0) | (arr >= 1)
    if np.any(bad):
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {_first_bad(arr, bad)!r}")
    if upper < 1.0:
        bad = arr >= upper
        if np.any(bad):
            raise ValueError(
                f"{name} must be < {upper}{hypothesis}, got {_first_bad(arr, bad)!r}"
            )
    if lower > 0.0:
        bad = arr < lower
        if np.any(bad):
            raise ValueError(f"{name} must be >= {lower:g}{lower_reason}, got {_first_bad(arr, bad)!r}")
    return arr


def check_scalar(value, name):
    """Refuse an array where one number is expected (naming the argument); return *value* unchanged."""
    if np.ndim(value) != 0:
        raise ValueError(f"{name} must be a single number, got an array of shape {np.shape(value)}")
    return value


def check_single_sigma(sigma, name="sigma", *, top):
    """One noise standard deviation, 0 < sigma <= *top*, as a Python float."""
    return float(check_scalar(check_sigma(sigma, name, top=top), name))


def check_positive(value, name):
    """Check 0 < value < inf."""
    arr = as_float_array(value, name)
    bad = ~np.isfinite(arr) | (arr <= 0)
    if np.any(bad):
        raise ValueError(f"{name} must be finite and > 0, got {_first_bad(arr, bad)!r}")
    return arr


def check_sigma(sigma, name="sigma", *, lower=None, top=None):
    """Check the noise standard deviation: 0 < sigma < inf (and in [lower, top] if given)."""
    arr = check_positive(sigma, name)
    if lower is not None or top is not None:
        _check_range(arr, name, lower, top)
    return arr


def _integers_above(value, maximum):
    """The first whole number held by *value* (exactly, before any float rounding) above *maximum*.

    A float holds every whole number only up to 2**53: 2**53 + 1 becomes 2**53 and would pass
    a float comparison.  Python ints (also inside lists) and integer arrays are compared exactly.
    """
    if isinstance(value, (int, np.integer)):
        return int(value) if int(value) > maximum else None
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu":
        top = int(maximum) if float(maximum) < 2.0**63 else None
        if top is not None and value.size and np.any(value > top):
            return int(value[value > top].flat[0])
        return None
    if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.dtype.kind == "O"):
        for item in (value.flat if isinstance(value, np.ndarray) else value):
            found = _integers_above(item, maximum)
            if found is not None:
                return found
    return None


def _count(maximum):
    """A cap as the messages print it: 2**53 by name, others as numbers."""
    return "2**53 (9.0072e+15)" if maximum == COUNT_MAX else f"{maximum:g}"


def check_int(value, name, *, minimum, maximum=COUNT_MAX):
    """Check that *value* holds whole numbers in [*minimum*, *maximum*]; return a float array.

    Whole numbers are compared with *maximum* exactly, so that 2**53 + 1 is refused rather
    than rounded to 2**53 and accepted.
    """
    arr = as_float_array(value, name)
    over = _integers_above(value, maximum)
    if over is not None:
        raise ValueError(f"{name} must be a whole number >= {minimum} and <= {_count(maximum)}, "
                         f"got {over} ({float(over):.4g})")
    bad = ~np.isfinite(arr) | (arr != np.round(arr)) | (arr < minimum) | (arr > maximum)
    if np.any(bad):
        raise ValueError(
            f"{name} must be a whole number >= {minimum} and <= {_count(maximum)}, got {_first_bad(arr, bad)!r}"
        )
    return arr


def check_n_p(n, p, *, n_name="n", p_name="p", margin=0):
    """Check p >= 1 and n > p + margin (whole numbers); return float arrays."""
    p_arr = check_int(p, p_name, minimum=1)
    n_arr = check_int(n, n_name, minimum=2)
    nb, pb = broadcast_named(**{n_name: n_arr, p_name: p_arr})
    bad = ~(nb > pb + margin)
    if np.any(bad):
        i = np.argmax(np.broadcast_to(bad, nb.shape))
        extra = f" + {margin}" if margin else ""
        raise ValueError(
            f"{n_name} must exceed {p_name}{extra} (need {n_name} > {p_name}{extra}), "
            f"got {n_name}={nb.flat[i]:g}, {p_name}={pb.flat[i]:g}"
        )
    return n_arr, p_arr


def scalar_or_array(result):
    """Return a Python float for 0-d results and an ndarray otherwise (ufunc style)."""
    result = np.asarray(result, dtype=float)
    if result.ndim == 0:
        return float(result)
    return result


def as_rng(rng):
    """Turn a seed, None or a Generator into a :class:`numpy.random.Generator`.

    A bool is not a seed (``rng=True`` would silently mean seed 1): a TypeError names rng.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, _BOOL):
        raise TypeError(f"rng must be a numpy.random.Generator, a seed or None, got the bool {rng!r} "
                        "(a bool is not a seed)")
    if isinstance(rng, _TEXT):
        raise ValueError(f"rng must be a numpy.random.Generator, a seed or None, got the text {rng!r}")
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"rng must be a numpy.random.Generator, a seed or None, got {rng!r}") from exc


def check_matrix(X, name="X"):
    """Check that *X* is a 2-D, non-empty array of finite reals; return it as float64.

    The message names the first non-finite entry by row and column.  Text is refused (an
    array of strings is not data, even where numpy would parse it); a bool array is data of
    zeros and ones and is accepted.
    """
    if not (isinstance(X, np.ndarray) and X.dtype.kind in "biufc"):
        try:
            _refuse_text_and_bools(X, name)
        except TypeError:  # a bool inside a list: data of zeros and ones, as a bool array
            pass
    _refuse_complex(X, name)
    arr = _to_float(X, name, f"{name} must be a 2-D array of real numbers")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n rows x p columns), got {arr.ndim} dimension(s)")
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got shape {arr.shape}")
    finite = np.isfinite(arr)
    if not finite.all():
        i, j = np.argwhere(~finite)[0]
        raise ValueError(f"{name} must be finite; entry at row {i}, column {j} is {arr[i, j]!r}")
    return arr


def check_block_sizes(block_sizes, p, n=None):
    """Check block sizes for block-diagonal masking (Section 4); return them as an int array.

    Each block must have more rows than the p columns; when *n* is given the sizes must also
    sum to n.
    """
    sizes = check_int(block_sizes, "block_sizes", minimum=1)
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError("block_sizes must be a non-empty 1-D sequence of whole numbers")
    p = check_int(p, "p", minimum=1)
    if p.ndim != 0:
        raise ValueError("p must be a single whole number >= 1 when block_sizes is given")
    if n is not None and sizes.sum() != n:
        raise ValueError(f"block_sizes must sum to the number of rows n={n}, got sum {sizes.sum():g}")
    small = sizes <= p
    if np.any(small):
        i = int(np.argmax(small))
        raise ValueError(
            f"every block must have more rows than p={p:g} columns (block_sizes[{i}]={sizes[i]:g}); "
            "Section 4 needs the smallest block n_s > p"
        )
    return sizes.astype(int)
