r"""Trust models: who must be trusted, what each party sends, and the distributed rival.

Setting B lets each person add their own noise and applies the mask through a
multi-party protocol (triple matrix-masking, Ding, Miao and Wu 2020), so no
single party sees the data.  The rival of chapter 9 needs ``X^T X`` exactly:
either a trusted curator, or secure aggregation of the outer products
``x_i x_i^T`` (Bonawitz et al. 2017) with the Gaussian noise split among the
parties.  This module simulates the second (:func:`distributed_gram`), gives
its real privacy when parties drop out after adding their noise
(:func:`distributed_delta`), and counts what each party sends in each model
(:func:`trust_costs`).

The distributed rival, precisely.  Each of the n parties adds symmetric noise
of the book's shape (variance ``v`` on the diagonal, ``v/2`` off it) to its own
``x_i x_i^T`` with ``v = tau^2 / ((1 - f_max) n)``, ``tau = sigma_gram(eps,
delta, p)`` and ``f_max`` the largest fraction of dropouts to be tolerated (0:
no padding).  Secure aggregation releases only the sum over the parties that
complete the protocol.  A party that drops out after adding its noise takes
both its data and its noise share with it; with a fraction ``f`` of dropouts
the noise left has variance ``tau^2 (1 - f)/(1 - f_max)`` on the diagonal, a
Gaussian mechanism on ``(K_ii, sqrt(2) K_ij)`` of the survivors with
sensitivity ``2 sqrt(p) - 1``.  Its real delta at the target eps is
``analytic_gaussian_delta(eps, tau_left / (2 sqrt(p) - 1))``: above the
target when ``f > f_max``.  Parties that collude with the server know their
own shares and can subtract them: a colluding fraction acts like the same
fraction of dropouts.  Real deployments add discrete Gaussian noise in
modular arithmetic (Kairouz, Liu and Steinke 2021); the continuous version
here has the same variance bookkeeping.

References
----------
K. Bonawitz et al., "Practical secure aggregation for privacy-preserving
machine learning", CCS 2017.
P. Kairouz, Z. Liu, T. Steinke, "The distributed discrete Gaussian mechanism
for federated learning with secure aggregation", ICML 2021.
J. Bell, K. Bonawitz, A. Gascón, T. Lepoint, M. Raykova, "Secure single-server
aggregation with (poly)logarithmic overhead", CCS 2020.
A. A. Ding, G. Miao, S. S. Wu, "On the privacy and utility properties of
triple matrix-masking", Journal of Privacy and Confidentiality 10(2), 2020.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._validate import as_float_array, as_rng, check_int, check_n_p, check_scalar, scalar_or_array
from ..exact.gaussian import SIGMA_GAUSS, analytic_gaussian_delta
from .gram import error_coefficients, example_moments, sigma_gram, sigma_low_large_n
from ..paper.mechanisms import check_data

__all__ = [
    "DistributedGram",
    "distributed_tau",
    "distributed_delta",
    "distributed_gram",
    "trust_costs",
    "MaskingDropout",
    "masking_dropout_cost",
]

#: Largest n p^2 of the per-party noise draws of distributed_gram(method="parties").
PARTY_ENTRIES_MAX = 2**26


def _fraction(value, name, *, top=1.0, open_top=True):
    arr = as_float_array(value, name)
    bad = ~np.isfinite(arr) | (arr < 0) | ((arr >= top) if open_top else (arr > top))
    if np.any(bad):
        bracket = ")" if open_top else "]"
        raise ValueError(f"{name} must lie in [0, {top:g}{bracket}, got {arr[bad].flat[0]!r}")
    return arr


def distributed_tau(eps, delta, p, dropout=0.0, pad=0.0):
    r"""Standard deviation (diagonal) of the noise left in the distributed rival's sum.

    .. math::

        \tau_{\text{left}} = \tau\sqrt{\frac{1 - f}{1 - f_{\max}}},\qquad
        \tau = \text{sigma\_gram}(\varepsilon, \delta, p),

    for a fraction ``f`` of dropouts when each party pads for ``f_max``.

    Parameters
    ----------
    eps, delta, p : array_like
        As in :func:`dpmask.rivals.gram.sigma_gram`.
    dropout : array_like
        Fraction of parties lost after adding noise, 0 <= f < 1.
    pad : array_like
        The fraction ``f_max`` the parties pad for, 0 <= f_max < 1.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> from dpmask.rivals.gram import sigma_gram
    >>> round(distributed_tau(0.1, 0.01, 2, dropout=0.5) / sigma_gram(0.1, 0.01, 2), 6)
    0.707107
    """
    f = _fraction(dropout, "dropout")
    f_max = _fraction(pad, "pad")
    tau = np.asarray(sigma_gram(eps, delta, p))
    return scalar_or_array(tau * np.sqrt((1.0 - f) / (1.0 - f_max)))


def distributed_delta(eps, delta, p, dropout=0.0, pad=0.0):
    r"""Real delta, at the target eps, of the distributed rival after dropouts.

    The sum of the survivors' noisy outer products is the Gaussian mechanism
    with noise :func:`distributed_tau` on sensitivity ``2 sqrt(p) - 1``
    (Lemma 9.2), so its delta at ``eps`` is
    :func:`dpmask.exact.analytic_gaussian_delta` ``(eps, tau_left/(2 sqrt(p) - 1))``.
    It equals the target ``delta`` when ``dropout == pad`` and exceeds it when
    more parties drop out than the padding covers.

    Parameters
    ----------
    eps, delta, p, dropout, pad : array_like
        As in :func:`distributed_tau`.

    Returns
    -------
    float or ndarray
        An upper bound on the real delta (the noise rounded down by 16 ulp,
        then :func:`dpmask.exact.analytic_gaussian_delta`'s upper bound),
        never 0.

    Examples
    --------
    >>> round(distributed_delta(0.1, 0.01, 2, dropout=0.0), 6)
    0.01
    >>> distributed_delta(0.1, 0.01, 2, dropout=0.2) > 0.01
    True
    """
    tau_left = np.asarray(distributed_tau(eps, delta, p, dropout, pad))
    sens = 2.0 * np.sqrt(np.asarray(check_int(p, "p", minimum=1))) - 1.0
    eps = np.asarray(as_float_array(eps, "eps"))
    # delta falls as the noise grows: the noise rounded down by 16 ulp (the roundings of tau_left and
    # of the sensitivity) keeps the answer an upper bound
    return scalar_or_array(_delta_up(eps, tau_left / sens))


def _delta_up(eps, sigma):
    """An upper bound on the Gaussian mechanism's delta at noise sigma (sensitivity 1), never 0.

    delta falls as the noise grows: sigma rounded down by 16 ulp (the roundings of tau_left and
    of the sensitivity); beyond the Gaussian curve's sigma range, sigma = 1e102 bounds it above,
    and below 1e-100 the bound is 1."""
    sigma = np.asarray(sigma, float) * (1.0 - 16.0 * np.finfo(float).eps)
    bottom, top = SIGMA_GAUSS
    return np.where(sigma < bottom, 1.0, analytic_gaussian_delta(eps, np.clip(sigma, bottom, top)))


class DistributedGram(NamedTuple):
    """Result of :func:`distributed_gram` (a named tuple).

    * ``gram`` -- the released sum over the survivors (p x p, symmetric);
    * ``survivors`` -- indices of the parties that completed the protocol;
    * ``tau_left`` -- standard deviation (diagonal) of the noise in ``gram``;
    * ``delta_real`` -- its delta at the target eps (:func:`distributed_delta`).
    """

    gram: np.ndarray
    survivors: np.ndarray
    tau_left: float
    delta_real: float


def distributed_gram(X, eps, delta, dropout=0.0, rng=None, pad=0.0, *, method="parties"):
    r"""Simulate the distributed rival: noisy outer products, secure aggregation, dropouts.

    Each party i adds ``E_i`` (symmetric, ``Var E_i,aa = tau^2/((1 - pad) n)``,
    off-diagonal half that) to ``x_i x_i^T``; ``round(dropout * n)`` parties,
    chosen at random, drop out after adding their noise, so their data and
    their noise are both lost; secure aggregation releases the sum over the
    others.  See the module docstring for the privacy bookkeeping.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Data with entries in [-1, 1], one row per party.
    eps : float
        Target eps, > 0.
    delta : float
        Target delta, in (0, 1).
    dropout : float
        Fraction of parties that drop out after adding noise, 0 <= dropout < 1.
    rng : numpy.random.Generator, int or None
    pad : float
        Fraction of dropouts the parties pad for, 0 <= pad < 1 (0: no padding).
    method : {"parties", "sum"}
        ``"parties"`` draws every party's noise (n p^2 <= 2**26 numbers);
        ``"sum"`` draws the survivors' total directly (the same law: a sum of
        independent Gaussians).

    Returns
    -------
    DistributedGram

    Examples
    --------
    >>> X = np.full((1000, 2), 0.5)
    >>> out = distributed_gram(X, 0.1, 0.01, dropout=0.1, rng=0, pad=0.1)
    >>> len(out.survivors), round(out.delta_real, 6)
    (900, 0.01)
    """
    X = check_data(X)
    n, p = X.shape
    f = float(check_scalar(_fraction(dropout, "dropout"), "dropout"))
    f_max = float(check_scalar(_fraction(pad, "pad"), "pad"))
    if method not in ("parties", "sum"):
        raise ValueError(f"method must be 'parties' or 'sum', got {method!r}")
    tau = float(sigma_gram(eps, delta, p))
    rng = as_rng(rng)
    lost = int(round(f * n))
    if lost >= n:
        raise ValueError(f"dropout={f} leaves no party of the n={n}")
    survivors = np.sort(rng.choice(n, size=n - lost, replace=False))
    share = tau / np.sqrt((1.0 - f_max) * n)  # each party's standard deviation (diagonal)
    Xs = X[survivors]
    if method == "parties":
        if n * p * p > PARTY_ENTRIES_MAX:
            raise ValueError(f"method='parties' needs n p^2 <= {PARTY_ENTRIES_MAX}, got n={n}, p={p}; use method='sum'")
        W = rng.standard_normal((n, p, p)) * share
        E = 0.5 * (W + np.swapaxes(W, 1, 2))       # every party adds its share ...
        noise = E[survivors].sum(axis=0)             # ... the dropped parties' shares are lost
    else:
        W = rng.standard_normal((p, p)) * share * np.sqrt(len(survivors))
        noise = 0.5 * (W + W.T)
    tau_left = share * np.sqrt(len(survivors))
    sens = 2.0 * np.sqrt(p) - 1.0
    delta_real = float(_delta_up(float(eps), tau_left / sens))
    return DistributedGram(Xs.T @ Xs + noise, survivors, float(tau_left), delta_real)


def trust_costs(n, p, *, float_bytes=8, key_bytes=32, share_bytes=32, aead_bytes=28, index_bytes=4,
                bits=32, neighbours=None):
    r"""What each party sends and receives in each trust model: bytes and rounds (a model).

    The byte-count model (every constant is an argument):

    * a real number travels as a float of ``float_bytes`` (8) bytes;
    * **Setting A** (local noise): each person publishes its noisy row, ``p``
      floats, one round; nobody is trusted (local differential privacy for
      changes of norm at most 1 in a row, the book's neighbours, not for a
      whole row of [-1, 1]^p).
    * **Setting B through triple matrix-masking** (Ding, Miao and Wu 2020, as
      the book describes it): each person adds its own noise, receives a
      ``p x p`` right mask from the data collector (``p^2`` floats), sends its
      masked noisy row (``p`` floats) to the masking service provider, which
      applies the secret ``A`` to the whole table and forwards it (``n p``
      floats, counted on the server line); two rounds for a person (receive,
      send).  Trusted: that the masking service provider and the data collector
      do not collude (together they undo the masks and hold Setting A's
      ``X + C``, whose noise is below what Setting A needs).
    * **The rival with a trusted curator**: each person sends its row (``p``
      floats) in one round; the curator sees ``X`` and publishes
      ``p (p + 1)/2`` floats.
    * **The rival through secure aggregation** (Bonawitz et al. 2017, the
      semi-honest protocol, four rounds: advertise keys, share keys, masked
      input, unmasking): each client sends two public keys (``2 key_bytes``),
      an encrypted pair of secret shares to each of its ``k`` neighbours
      (``k (2 share_bytes + 2 index_bytes + aead_bytes)``; ``k = n - 1`` in
      the original protocol, ``O(log n)`` in Bell et al. 2020), its masked
      input of ``m = p (p + 1)/2`` entries of ``bits`` bits (the modular
      integers of the distributed discrete Gaussian, Kairouz, Liu and Steinke
      2021), and at most ``k`` shares (``k share_bytes``) in the unmasking
      round; it receives the ``k`` neighbours' keys and ciphertexts and the
      list of survivors (``k index_bytes``).  Trusted: the server and fewer
      than a threshold of clients do not collude; the noise shares of dropped or
      colluding clients are lost (:func:`distributed_delta`).

    Parameters
    ----------
    n : int
        Parties (rows), n >= 2.
    p : int
        Columns, p >= 1.
    float_bytes, key_bytes, share_bytes, aead_bytes, index_bytes, bits : int
        The constants of the model above (positive whole numbers).
    neighbours : int or None
        Secure aggregation's neighbours per client, 1 <= k <= n - 1 (None: n - 1).

    Returns
    -------
    list of dict
        One row per model: ``model``, ``trusted``, ``party_sends`` (bytes),
        ``party_receives`` (bytes), ``party_rounds``, ``server_bytes`` (what
        the servers exchange or publish), ``dropout`` and ``collusion`` (what
        they do to privacy, in words).

    Examples
    --------
    >>> rows = trust_costs(1000, 2)
    >>> [r["party_sends"] for r in rows][:3]
    [16, 16, 16]
    """
    n = int(check_scalar(check_int(n, "n", minimum=2), "n"))
    p = int(check_scalar(check_int(p, "p", minimum=1), "p"))
    for name, value in dict(float_bytes=float_bytes, key_bytes=key_bytes, share_bytes=share_bytes,
                            aead_bytes=aead_bytes, index_bytes=index_bytes, bits=bits).items():
        check_scalar(check_int(value, name, minimum=1), name)
    k = n - 1 if neighbours is None else int(check_scalar(check_int(neighbours, "neighbours", minimum=1,
                                                                    maximum=n - 1), "neighbours"))
    m = p * (p + 1) // 2
    fb = float_bytes
    masked_input = -(-m * bits // 8)
    secagg_sends = 2 * key_bytes + k * (2 * share_bytes + 2 * index_bytes + aead_bytes) + masked_input + k * share_bytes
    secagg_receives = k * (2 * key_bytes + index_bytes) + k * (2 * share_bytes + 2 * index_bytes + aead_bytes) \
        + k * index_bytes
    return [
        {"model": "Setting A (local noise)",
         "trusted": "nobody (local DP for changes of norm <= 1 in a row, not for a whole row)",
         "party_sends": p * fb, "party_receives": 0, "party_rounds": 1, "server_bytes": n * p * fb,
         "dropout": "the row is missing; the others' privacy is unchanged",
         "collusion": "nothing to collude over: every row carries its own noise"},
        {"model": "Setting B (triple matrix-masking)",
         "trusted": "masking service provider and data collector do not collude",
         "party_sends": p * fb, "party_receives": p * p * fb, "party_rounds": 2, "server_bytes": 2 * n * p * fb,
         "dropout": "the row is missing; every other row keeps its own noise, but sigma falls with n, so it "
                    "must be calibrated for the smallest n that may complete (masking_dropout_cost)",
         "collusion": "the two servers together hold X + C, Setting A's release at Setting B's smaller sigma"},
        {"model": "rival, trusted curator", "trusted": "the curator sees X",
         "party_sends": p * fb, "party_receives": 0, "party_rounds": 1, "server_bytes": m * fb,
         "dropout": "no effect: the curator adds all the noise",
         "collusion": "the curator holds X"},
        {"model": "rival, secure aggregation (distributed noise)",
         "trusted": "server and fewer than a threshold of clients do not collude",
         "party_sends": secagg_sends, "party_receives": secagg_receives, "party_rounds": 4,
         "server_bytes": m * fb,
         "dropout": "dropped parties' noise shares are lost: pad each share by 1/(1 - f_max)",
         "collusion": "colluders subtract their own shares: like the same fraction of dropouts"},
    ]


class MaskingDropout(NamedTuple):
    """What dropouts cost masking (:func:`masking_dropout_cost`); ``quantity`` names what ``ratio`` is."""

    n_min: int
    sigma_planned: float
    sigma_needed: float
    ratio: float
    quantity: str = "noise"


#: The noise levels :func:`masking_dropout_cost` knows.
DROPOUT_LEVELS = ("sigma_0", "sigma_low")
#: The quantities :func:`masking_dropout_cost` can return the ratio of.
DROPOUT_QUANTITIES = ("noise", "error")
#: The statistics of Proposition 9.6 whose error ratio :func:`masking_dropout_cost` gives.
DROPOUT_STATISTICS = ("ols", "corr", "angle")


def _dropout_error_ratio(planned, needed, moments, p, statistic):
    r"""Proposition 9.6's first-order RMSE at ``needed`` over that at ``planned``, the same n rows.

    With ``s = planned``, ``s' = needed`` and ``r = s'/s``,
    ``sqrt((c2 s'^2 + c4 s'^4) / (c2 s^2 + c4 s^4)) = r sqrt((c2 + c4 s'^2) / (c2 + c4 s^2))``; the
    second form keeps the fourth powers of a large sigma out of the float range.
    """
    if moments is None:
        if not 2 <= p <= 6:
            raise ValueError(f"moments must be given for p = {p}: the example data (dpmask.rivals.gram.example_moments) "
                             "have 2 <= p <= 6 columns")
        moments = example_moments(p)
    M = as_float_array(moments, "moments")
    if M.shape != (p, p):
        raise ValueError(f"moments must be a p x p = {p} x {p} matrix (X^T X / n), got shape {M.shape}")
    try:
        c2, c4 = error_coefficients(M)[statistic]
    except ValueError as exc:
        raise ValueError(f"moments: {exc}") from exc
    if not c2 + c4 > 0:
        raise ValueError(f"moments give the statistic {statistic!r} no first-order error (c2 = c4 = 0)")
    r = needed / planned
    return float(r * np.sqrt((c2 + c4 * needed**2) / (c2 + c4 * planned**2)))


def _check_dropout_options(level, quantity, statistic, moments, p):
    """The choices of :func:`masking_dropout_cost`, each refused by name outside its set."""
    if not isinstance(level, str) or level not in DROPOUT_LEVELS:
        raise ValueError(f"level must be one of {DROPOUT_LEVELS}, got {level!r}")
    if not isinstance(quantity, str) or quantity not in DROPOUT_QUANTITIES:
        raise ValueError(f"quantity must be one of {DROPOUT_QUANTITIES}, got {quantity!r}")
    if not isinstance(statistic, str) or statistic not in DROPOUT_STATISTICS:
        raise ValueError(f"statistic must be one of {DROPOUT_STATISTICS}, got {statistic!r}")
    if quantity == "noise" and (moments is not None or statistic != "ols"):
        raise ValueError("moments and statistic are used only with quantity='error' (the noise ratio does not "
                         f"depend on the data), got moments={'given' if moments is not None else None}, "
                         f"statistic={statistic!r}")
    if quantity == "error" and p < 2:
        raise ValueError(f"p must be at least 2 for quantity='error' (a statistic of two columns or more), got p={p}")


def masking_dropout_cost(eps, delta, n, p, dropout, *, level="sigma_0", quantity="noise", moments=None,
                         statistic="ols"):
    r"""What masking pays, in noise or in first-order error, when up to a fraction of the rows may drop out.

    In Setting B through triple matrix-masking each person adds their own noise before the
    protocol runs, so the noise must already be right for the release that comes out.  The
    noise masking can prove, Theorem 3.4's :math:`\sigma_0(n)`, *falls* as the number of rows
    grows, and so does the projection lower bound :math:`\sigma_{\mathrm{low}}(n)` below which no
    analysis can go: a :math:`\sigma` computed for the planned ``n`` is not proven sufficient for
    a release of fewer rows (at :math:`\sigma_{\mathrm{low}}` it is not sufficient at all).  If up
    to a fraction ``dropout`` of the people may fail to complete, the release may have as few as

    .. math::

        n_{\min} = n - \lfloor f n \rfloor

    rows, and every person must add :math:`\sigma' = \sigma(n_{\min})` instead of
    :math:`\sigma = \sigma(n)`: padding by another name, paid whether or not anyone drops out.
    Its cost in two units:

    * ``quantity="noise"``: the noise ratio :math:`r = \sigma'/\sigma \ge 1`;
    * ``quantity="error"``: the ratio of the first-order RMSEs of Proposition 9.6 (equation 9.3)
      of a release of ``n`` rows (nobody drops out) at :math:`\sigma'` and at :math:`\sigma`,

      .. math::

          \sqrt{\frac{c_2\sigma'^2 + c_4\sigma'^4}{c_2\sigma^2 + c_4\sigma^4}}
          = r\,\sqrt{\frac{c_2 + c_4\sigma'^2}{c_2 + c_4\sigma^2}} \in [r, r^2],

      with :math:`c_2, c_4` the constants of the statistic for data of second moments
      ``moments`` (:func:`dpmask.rivals.gram.error_coefficients`).  Masking's Gram noise has a part in
      :math:`\sigma^2` (the cross terms) and one in :math:`\sigma^4` (:math:`C^\top C`), so the
      error grows by between the noise ratio and its square: at :math:`\sigma_{\mathrm{low}}`,
      where :math:`r = (n/n_{\min})^{1/4}`, between :math:`(n/n_{\min})^{1/4}` and
      :math:`(n/n_{\min})^{1/2} \le (1 - f)^{-1/2}`.

    The rival's price for the same dropouts is in the same units: the distributed Gaussian
    mechanism on :math:`X^\top X` padded for a fraction ``f`` (:func:`distributed_tau` with
    ``pad=f``) has its noise :math:`\tau` *and*, by equation 9.3 (error :math:`\propto \tau`), its
    first-order error multiplied by :math:`1/\sqrt{1 - f}`; so compare ``quantity="error"``
    with it as an error ratio, or ``quantity="noise"`` with it as a noise ratio.

    Parameters
    ----------
    eps : float
        Privacy parameter, in [1e-100, 1e4].
    delta : float
        Privacy parameter, 0 < delta < 1 - 1e-8.
    n : int
        Planned rows, a whole number with n > p, n <= 2**53.
    p : int
        Columns, a whole number >= 1 (with ``quantity="error"``: >= 2, and <= 6 without ``moments``).
    dropout : float
        Largest fraction of the rows that may drop out, 0 <= dropout < 1, with n_min > p.
    level : {"sigma_0", "sigma_low"}
        ``"sigma_0"``: Theorem 3.4's sufficient noise (:func:`dpmask.paper.bounds.sigma_b`);
        ``"sigma_low"``: the projection lower bound in its large-n form
        (:func:`dpmask.rivals.gram.sigma_low_large_n`, the form chapter 9's comparison uses), for which
        the noise ratio is :math:`(n / n_{\min})^{1/4}`.
    quantity : {"noise", "error"}
        Which ratio ``ratio`` is (above).
    moments : array_like, shape (p, p), optional
        Only with ``quantity="error"``: the data's second moments per row, ``X^T X / n``, positive
        definite (the error ratio depends on the data only through them).  Default: the book's
        example data, :func:`dpmask.rivals.gram.example_moments` (2 <= p <= 6).
    statistic : {"ols", "corr", "angle"}
        Only with ``quantity="error"``: the least-squares slopes of the last column on the others,
        the correlations, or the leading eigenvector's angle (:func:`dpmask.rivals.gram.first_order_errors`).

    Returns
    -------
    MaskingDropout
        ``n_min``, ``sigma_planned`` (:math:`\sigma(n)`), ``sigma_needed``
        (:math:`\sigma(n_{\min})`), ``ratio`` (the noise or the error ratio) and ``quantity``.

    Raises
    ------
    ValueError
        On arguments outside these ranges (naming the argument), a dropout that leaves
        n_min <= p rows, or ``moments``/``statistic`` given with ``quantity="noise"``.

    Examples
    --------
    >>> r = masking_dropout_cost(0.1, 0.01, 1000, 2, 0.5, level="sigma_low")
    >>> r.n_min, round(r.ratio, 4)
    (500, 1.1892)

    In first-order slope error, at a small eps the sigma^4 part dominates and the cost nears the
    rival's 1/sqrt(1 - 0.5) = 1.4142:

    >>> round(masking_dropout_cost(0.001, 0.001, 10**4, 2, 0.5, level="sigma_low", quantity="error").ratio, 3)
    1.396
    """
    from ..paper.bounds import sigma_b

    for name, value in (("eps", eps), ("delta", delta), ("n", n), ("p", p), ("dropout", dropout)):
        check_scalar(value, name)
    n_arr, p_arr = check_n_p(n, p)
    n, p = int(n_arr), int(p_arr)
    f = float(check_scalar(_fraction(dropout, "dropout"), "dropout"))
    _check_dropout_options(level, quantity, statistic, moments, p)
    # floor(f n), rounded towards more dropouts when f n is within rounding of a whole number (the safe side)
    lost = int(np.floor(f * n + 1e-9 * max(1.0, f * n)))
    n_min = n - lost
    if n_min <= p:
        raise ValueError(f"dropout must leave more than p = {p} rows of n = {n}, got dropout={f!r} "
                         f"(n_min = {n_min})")

    def sigma(rows):
        if level == "sigma_0":
            return float(sigma_b(eps, delta, rows, p))
        return float(sigma_low_large_n(eps, delta, rows, p))

    planned, needed = sigma(n), sigma(n_min)
    if quantity == "noise":
        return MaskingDropout(n_min, planned, needed, needed / planned, "noise")
    return MaskingDropout(n_min, planned, needed, _dropout_error_ratio(planned, needed, moments, p, statistic), "error")
