"""Table 1 of the paper as tidy rows, and the paper's printed values to check them against.

Table 1 compares, for eps in {0.1, 0.01, 0.001}, delta in {0.01, 0.001},
p in {1, 5, 20} and n in {100, 10000}, Theorem 3.2's necessary and sufficient
sigma for Setting A with Theorem 3.4's sufficient sigma for Setting B.

Domain (the rule of the package): a grid is a dict with exactly the keys
``eps``, ``delta``, ``p``, ``n``, each a non-empty 1-D sequence, at most
100 000 rows in all, every value inside the domain of :mod:`dpmask.paper.bounds`
(eps in [1e-100, 1), delta in (0, 1/2), whole numbers n > p >= 1 with
n <= 2**53); outside it a ``ValueError`` names the key.  Counts are returned
as exact 64-bit integers.
"""

from __future__ import annotations

import itertools

import numpy as np

from .._validate import as_float_array, check_flag
from .bounds import sigma_a_necessary, sigma_a_sufficient, sigma_b

__all__ = ["TABLE1_GRID", "PAPER_TABLE1", "table1", "table1_arrays"]

TABLE1_GRID = {
    "eps": (0.1, 0.01, 0.001),
    "delta": (0.01, 0.001),
    "p": (1, 5, 20),
    "n": (100, 10000),
}

# The paper's Table 1 as printed (eps, delta, p, n, A necessary, A sufficient, B sufficient, ratio),
# copied from the LaTeX source; used only to check the computed table.
PAPER_TABLE1 = (
    (0.1, 0.01, 1, 100, 23.3, 25.4, 6.9, 4),
    (0.1, 0.01, 1, 10000, 23.3, 25.4, 6.4, 4),
    (0.1, 0.01, 5, 100, 23.3, 25.4, 9.5, 3),
    (0.1, 0.01, 5, 10000, 23.3, 25.4, 8.9, 3),
    (0.1, 0.01, 20, 100, 23.3, 25.4, 13.1, 2),
    (0.1, 0.01, 20, 10000, 23.3, 25.4, 12.1, 2),
    (0.1, 0.001, 1, 100, 30.9, 32.5, 7.1, 5),
    (0.1, 0.001, 1, 10000, 30.9, 32.5, 6.4, 5),
    (0.1, 0.001, 5, 100, 30.9, 32.5, 9.8, 3),
    (0.1, 0.001, 5, 10000, 30.9, 32.5, 8.9, 4),
    (0.1, 0.001, 20, 100, 30.9, 32.5, 13.5, 2),
    (0.1, 0.001, 20, 10000, 30.9, 32.5, 12.1, 3),
    (0.01, 0.01, 1, 100, 232.6, 254.1, 21.8, 12),
    (0.01, 0.01, 1, 10000, 232.6, 254.1, 20.2, 13),
    (0.01, 0.01, 5, 100, 232.6, 254.1, 30.2, 8),
    (0.01, 0.01, 5, 10000, 232.6, 254.1, 28.0, 9),
    (0.01, 0.01, 20, 100, 232.6, 254.1, 41.5, 6),
    (0.01, 0.01, 20, 10000, 232.6, 254.1, 38.3, 7),
    (0.01, 0.001, 1, 100, 309.0, 325.2, 22.4, 15),
    (0.01, 0.001, 1, 10000, 309.0, 325.2, 20.2, 16),
    (0.01, 0.001, 5, 100, 309.0, 325.2, 31.0, 10),
    (0.01, 0.001, 5, 10000, 309.0, 325.2, 28.1, 12),
    (0.01, 0.001, 20, 100, 309.0, 325.2, 42.7, 8),
    (0.01, 0.001, 20, 10000, 309.0, 325.2, 38.4, 8),
    (0.001, 0.01, 1, 100, 2326.3, 2541.3, 68.9, 37),
    (0.001, 0.01, 1, 10000, 2326.3, 2541.3, 63.8, 40),
    (0.001, 0.01, 5, 100, 2326.3, 2541.3, 95.4, 27),
    (0.001, 0.01, 5, 10000, 2326.3, 2541.3, 88.5, 29),
    (0.001, 0.01, 20, 100, 2326.3, 2541.3, 131.1, 19),
    (0.001, 0.01, 20, 10000, 2326.3, 2541.3, 121.0, 21),
    (0.001, 0.001, 1, 100, 3090.2, 3252.0, 70.8, 46),
    (0.001, 0.001, 1, 10000, 3090.2, 3252.0, 64.0, 51),
    (0.001, 0.001, 5, 100, 3090.2, 3252.0, 98.0, 33),
    (0.001, 0.001, 5, 10000, 3090.2, 3252.0, 88.8, 37),
    (0.001, 0.001, 20, 100, 3090.2, 3252.0, 134.9, 24),
    (0.001, 0.001, 20, 10000, 3090.2, 3252.0, 121.4, 27),
)

#: Most rows table1 builds (the product of the grid's lengths).
MAX_ROWS = 100_000

COLUMNS = ("eps", "delta", "p", "n", "a_necessary", "a_sufficient", "b_sufficient", "ratio")


def table1_arrays(grid=None, *, corrected=False):
    """Table 1's columns as a dict of 1-D arrays, computed in one vectorised pass.

    Parameters
    ----------
    grid : dict, optional
        Values of ``eps``, ``delta``, ``p`` and ``n`` (each a non-empty
        sequence); rows run over their product in that nesting order, as in
        the paper; at most 100 000 rows.  Defaults to ``TABLE1_GRID``.  Each
        value must lie in the domain of :mod:`dpmask.paper.bounds` (eps in
        [1e-100, 1), delta in (0, 1/2), whole numbers n > p >= 1 with
        n <= 2**53); outside it a ValueError names the argument.
    corrected : bool
        Use the conservative variant of Theorem 3.4 with 2(n - p - 1)
        (see :func:`dpmask.paper.bounds.g_b`).

    Returns
    -------
    dict of ndarray
        Keys as ``COLUMNS``; ``ratio`` is A sufficient / B sufficient
        (unrounded; the paper prints it rounded to an integer).
    """
    corrected = check_flag(corrected, "corrected")
    grid = TABLE1_GRID if grid is None else grid
    if not isinstance(grid, dict) or set(grid) != {"eps", "delta", "p", "n"}:
        raise ValueError(f"grid must be a dict with exactly the keys 'eps', 'delta', 'p', 'n', got {grid!r}")
    values = {}
    for key in ("eps", "delta", "p", "n"):
        arr = as_float_array(grid[key], f"grid[{key!r}]")
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"grid[{key!r}] must be a non-empty 1-D sequence of numbers, got {grid[key]!r}")
        values[key] = arr
    size = np.prod([v.size for v in values.values()])
    if size > MAX_ROWS:
        raise ValueError(f"grid must give at most {MAX_ROWS} rows, got {size}")
    rows = np.array(list(itertools.product(values["eps"], values["delta"], values["p"], values["n"])), dtype=float)
    eps, delta, p, n = rows.T
    a_nec = sigma_a_necessary(eps, delta)
    a_suf = sigma_a_sufficient(eps, delta)
    b_suf = sigma_b(eps, delta, n, p, corrected=corrected)
    return {
        "eps": eps,
        "delta": delta,
        "p": p.astype(np.int64),
        "n": n.astype(np.int64),
        "a_necessary": a_nec,
        "a_sufficient": a_suf,
        "b_sufficient": b_suf,
        "ratio": a_suf / b_suf,
    }


def table1(grid=None, *, corrected=False):
    """The paper's Table 1 as a list of rows (dicts), computed by :mod:`dpmask.paper.bounds`.

    Columns: ``eps``, ``delta``, ``p``, ``n``, Setting A necessary (equation
    DP-boundA.nec), Setting A sufficient (DP-boundA.suf), Setting B sufficient
    (Theorem 3.4, sigma.bound.new) and their ratio.

    Parameters
    ----------
    grid : dict, optional
        See :func:`table1_arrays`.
    corrected : bool
        See :func:`table1_arrays`.

    Returns
    -------
    list of dict

    Examples
    --------
    >>> rows = table1()
    >>> len(rows), round(rows[0]["b_sufficient"], 1)
    (36, 6.9)
    """
    cols = table1_arrays(grid, corrected=corrected)
    out = []
    for i in range(len(cols["eps"])):
        row = {}
        for key in COLUMNS:
            value = cols[key][i]
            row[key] = int(value) if key in ("p", "n") else float(value)
        out.append(row)
    return out


def format_table1(rows=None):
    """Render Table 1 as aligned plain text, rounded as the paper prints it."""
    rows = table1() if rows is None else rows
    header = f"{'eps':>6} {'delta':>6} {'p':>3} {'n':>6} {'A nec':>8} {'A suf':>8} {'B suf':>7} {'ratio':>5}"
    lines = [header]
    for r in rows:
        lines.append(
            f"{r['eps']:>6g} {r['delta']:>6g} {r['p']:>3d} {r['n']:>6d} {r['a_necessary']:>8.1f} "
            f"{r['a_sufficient']:>8.1f} {r['b_sufficient']:>7.1f} {r['ratio']:>5.0f}"
        )
    return "\n".join(lines)
