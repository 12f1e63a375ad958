"""Tests for dpmask.data: the RAND HIE extract loads offline from the statsmodels wheel, has the
documented shape, lies in [-1, 1], and is scaled by the documented public bounds (not by the data's
own range)."""

import socket

import numpy as np
import pytest

pytest.importorskip("statsmodels")

from dpmask import data  # noqa: E402


def test_loads_offline_with_the_documented_shape_and_licence(monkeypatch):
    def no_network(*args, **kwargs):
        raise OSError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    X, names, info = data.load_randhie(return_info=True)
    assert X.shape == (data.RANDHIE_ROWS, 5) == (20190, 5)
    assert names == ["lncoins", "idp", "physlm", "hlthp", "log1p_mdvis"]
    assert np.all(np.abs(X) <= 1.0) and np.all(np.isfinite(X))
    assert info.licence == "This is in the public domain."
    assert "RAND" in info.source and info.n_clipped == 0


def test_bounds_are_the_documented_constants_not_the_data_range():
    from statsmodels.datasets import randhie

    # statsmodels documents lncoins = ln(coinsurance + 1) with 0 <= coinsurance <= 100
    assert "lncoins - ln(coinsurance + 1), 0 <= coninsurance <= 100" in randhie.NOTE
    assert data.RANDHIE_BOUNDS["lncoins"] == (0.0, np.log(101.0))
    assert data.RANDHIE_BOUNDS["log1p_mdvis"] == (0.0, np.log(366.0))
    raw = randhie.load_pandas().data
    X, names = data.load_randhie(("lncoins", "idp"))
    np.testing.assert_allclose(X[:, 0], 2 * raw["lncoins"] / np.log(101.0) - 1, rtol=0, atol=1e-12)
    np.testing.assert_allclose(X[:, 1], 2 * raw["idp"] - 1, rtol=0, atol=0)
    np.testing.assert_allclose(X[:, 2], 2 * np.log1p(raw["mdvis"]) / np.log(366.0) - 1, atol=1e-12)
    # the data's own range differs from the bound (the largest visit count is 77, not 365), so a
    # loader that scaled by min/max would fail the line above
    assert np.log1p(raw["mdvis"].max()) < np.log(366.0) - 1
    assert X[:, 2].max() < 0.5   # min/max scaling would put the largest count at exactly 1


def test_refuses_unknown_or_repeated_columns():
    with pytest.raises(ValueError, match="predictors must be distinct names"):
        data.load_randhie(("lncoins", "lncoins"))
    with pytest.raises(ValueError, match="predictors must be distinct names"):
        data.load_randhie(("lpi",))
    with pytest.raises(ValueError, match="sequence of column names"):
        data.load_randhie("lncoins")
