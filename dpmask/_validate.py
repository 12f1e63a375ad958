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
whole number exactly.
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
    "COUNT_MAX",
]

#: Largest count (n, p, block size) any function accepts: every whole number up
#: to 2**53 is exact in a float64, and no data set comes near it.
COUNT_MAX = 2**53


def _refuse_complex(value, name):
    try:
        is_complex = isinstance(value, complex) or np.iscomplexobj(value)
    except (TypeError, ValueError) as exc:  # ragged nesting: numpy cannot even look at it
        raise ValueError(f"{name} must be a real number or a regular (non-ragged) array of real numbers") from exc
    if is_complex:
        raise TypeError(f"{name} must be real, got a complex value (dropping the imaginary part is not done silently)")


def as_float_array(value, name):
    """Convert *value* to a float64 array; refuse complex and non-numeric input."""
    _refuse_complex(value, name)
    return _to_float(value, name, f"{name} must be a real number or an array of real numbers, got {value!r}")


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


def check_eps(eps, name="eps", *, upper=None, hypothesis="", lower=None, top=None):
    """Check 0 < eps < inf (and eps < *upper* when a theorem requires it).

    *lower* and *top* give a documented numerical domain [lower, top] where a
    function is finite and accurate (outside it a ValueError names eps).
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


def check_int(value, name, *, minimum, maximum=COUNT_MAX):
    """Check that *value* holds whole numbers in [*minimum*, *maximum*]; return a float array."""
    arr = as_float_array(value, name)
    bad = ~np.isfinite(arr) | (arr != np.round(arr)) | (arr < minimum) | (arr > maximum)
    if np.any(bad):
        raise ValueError(
            f"{name} must be a whole number >= {minimum} and <= {maximum:g}, got {_first_bad(arr, bad)!r}"
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
    """Turn a seed, None or a Generator into a :class:`numpy.random.Generator`."""
    if isinstance(rng, np.random.Generator):
        return rng
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"rng must be a numpy.random.Generator, a seed or None, got {rng!r}") from exc


def check_matrix(X, name="X"):
    """Check that *X* is a 2-D, non-empty array of finite reals; return it as float64.

    The message names the first non-finite entry by row and column.
    """
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
