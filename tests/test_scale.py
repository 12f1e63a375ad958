"""Tests for dpmask.scale: masking Dask arrays block by block and as one Setting B release.

Truths used: the Gram identity ``Y^T Y = (X + C)^T (X + C)`` (to rounding), with
``C`` regenerated here by the test's own code from the seeding scheme the module
documents (block i's noise from ``SeedSequence(root, spawn_key=(0, i))``), not
by ``scale.noisy_data_dask``, which shares the releases' noise code;
the moment identity ``E[Y^T Y] = X^T X + n sigma^2 I`` by Monte Carlo within
five standard errors per entry, the law of one coordinate of a uniform frame
(``U_11^2 ~ Beta(1/2, (n-1)/2)``, scipy), and two-sample Kolmogorov-Smirnov
tests against the dense Haar reference ``release_b(..., method="dense")``.
Randomised checks are seeded, so they pass or fail the same way every run.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from dpmask import scale  # noqa: E402
from dpmask.scale import write  # noqa: E402
from dpmask.paper.mechanisms import release_b, release_block  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KS_LEVEL = 1e-3  # a correct sampler fails a seeded KS test at this level with probability 0.001


def tiled(X0, copies):
    """``copies`` stacked copies of X0, one per chunk: each block is an independent replicate."""
    n0, p = X0.shape
    return da.from_array(np.tile(X0, (copies, 1)), chunks=(n0, p))


def fixed_data(n, p, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=(n, p))


def documented_noisy(X, sigma, seed):
    """``X + C`` rebuilt from the documented seeding, independently of dpmask.scale's code.

    The root is one draw ``integers(0, 2**63 - 1)`` from ``default_rng(seed)``;
    row chunk i's noise is ``sigma`` times standard normals from
    ``default_rng(SeedSequence(root, spawn_key=(0, i)))``.
    """
    values = np.asarray(X.compute(scheduler="synchronous"), dtype=np.float64)
    root = int(np.random.default_rng(seed).integers(0, 2**63 - 1))
    noise = [
        np.random.default_rng(np.random.SeedSequence(root, spawn_key=(0, i))).standard_normal((size, X.shape[1]))
        for i, size in enumerate(X.chunks[0])
    ]
    return values + sigma * np.vstack(noise)


# --------------------------------------------------------------------------- block-diagonal path

def test_block_release_keeps_every_block_gram():
    X = scale.random_data_dask(600, 3, chunks=150, rng=1)
    Y = release_block(X, 0.7, rng=5).compute()
    M = documented_noisy(X, 0.7, seed=5)
    for start in range(0, 600, 150):
        b = slice(start, start + 150)
        np.testing.assert_allclose(Y[b].T @ Y[b], M[b].T @ M[b], rtol=1e-10, atol=1e-9)
    # and it is a masked release, not the noisy data itself
    assert not np.allclose(Y, M)


def test_block_release_is_deterministic_and_scheduler_free():
    X = scale.random_data_dask(800, 2, chunks=100, rng=3)
    a = scale.release_block_dask(X, 1.0, rng=11).compute(scheduler="threads")
    b = scale.release_block_dask(X, 1.0, rng=11).compute(scheduler="synchronous")
    c = scale.release_block_dask(X, 1.0, rng=np.random.default_rng(11)).compute()
    d = scale.release_block_dask(X, 1.0, rng=12).compute()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert not np.allclose(a, d)


def test_block_release_joins_column_chunks():
    X0 = fixed_data(400, 4)
    one = scale.release_block_dask(da.from_array(X0, chunks=(100, 4)), 1.0, rng=2).compute()
    many = scale.release_block_dask(da.from_array(X0, chunks=(100, 1)), 1.0, rng=2).compute()
    np.testing.assert_allclose(one, many, rtol=1e-12, atol=1e-12)


def test_block_not_larger_than_p_is_refused():
    X = da.zeros((30, 5), chunks=((10, 5, 15), (5,)))
    with pytest.raises(ValueError, match=r"chunk 1 has 5 rows"):
        scale.release_block_dask(X, 1.0, rng=0)


@pytest.mark.parametrize(
    "bad, message",
    [(1.5, r"row 203, column 1"), (np.nan, r"finite.*row 203, column 1 is nan")],
)
def test_block_bad_entries_fail_at_compute(bad, message):
    X0 = np.zeros((400, 2))
    X0[203, 1] = bad
    Y = scale.release_block_dask(da.from_array(X0, chunks=(100, 2)), 1.0, rng=0)
    with pytest.raises(ValueError, match=message):
        Y.compute(scheduler="synchronous")


@pytest.mark.parametrize("sigma", [0.0, -1.0, np.inf, np.nan])
def test_bad_sigma_is_refused(sigma):
    X = da.zeros((40, 2), chunks=(20, 2))
    with pytest.raises(ValueError, match="sigma"):
        scale.release_block_dask(X, sigma, rng=0)
    with pytest.raises(ValueError, match="sigma"):
        scale.release_b_dask(X, sigma, rng=0)


def test_non_dask_and_wrong_shapes_are_refused():
    with pytest.raises(ValueError, match="dask.array.Array"):
        scale.release_block_dask(np.zeros((40, 2)), 1.0)
    with pytest.raises(ValueError, match="2-D"):
        scale.release_block_dask(da.zeros(40, chunks=20), 1.0)
    with pytest.raises(ValueError, match="n > p"):
        scale.release_b_dask(da.zeros((3, 3), chunks=(3, 3)), 1.0)
    with pytest.raises(ValueError, match="unknown row chunk"):
        X = da.zeros((40, 2), chunks=(20, 2))
        scale.release_block_dask(X[X[:, 0] > -1], 1.0)


def test_release_block_dispatches_dask_arrays():
    X = scale.random_data_dask(300, 2, chunks=100, rng=4)
    via_mechanisms = release_block(X, 1.0, rng=9)
    assert isinstance(via_mechanisms, da.Array)
    np.testing.assert_array_equal(via_mechanisms.compute(), scale.release_block_dask(X, 1.0, rng=9).compute())


def test_block_moments_match_theory():
    # E[Y_b^T Y_b] = X_b^T X_b + n_b sigma^2 I for every block; 1500 independent blocks.
    X0, sigma, copies = fixed_data(8, 2, seed=1), 0.8, 1500
    Y = scale.release_block_dask(tiled(X0, copies), sigma, rng=21).compute()
    grams = np.einsum("kia,kib->kab", Y.reshape(copies, 8, 2), Y.reshape(copies, 8, 2))
    mean, se = grams.mean(axis=0), grams.std(axis=0, ddof=1) / np.sqrt(copies)
    truth = X0.T @ X0 + 8 * sigma**2 * np.eye(2)
    assert np.all(np.abs(mean - truth) < 5 * se), (mean, truth, se)


def test_block_rows_follow_dense_haar_reference():
    # One block of the Dask release against release_b(..., method="dense") on the same data.
    X0, sigma, copies = fixed_data(6, 2, seed=2), 0.5, 1000
    Y = scale.release_block_dask(tiled(X0, copies), sigma, rng=31).compute().reshape(copies, 6, 2)
    rng = np.random.default_rng(32)
    ref = np.stack([release_b(X0, sigma, rng, method="dense") for _ in range(copies)])
    for stat in (lambda A: np.sum(A[:, 0] ** 2, axis=1), lambda A: A[:, 0, 0], lambda A: A[:, 5, 1]):
        assert stats.ks_2samp(stat(Y), stat(ref)).pvalue > KS_LEVEL


def test_block_release_is_not_just_noise():
    # Power check for the KS comparison above: Setting A (no masking) is rejected.
    X0, sigma, copies = fixed_data(6, 2, seed=2), 0.5, 1000
    M = documented_noisy(tiled(X0, copies), sigma, seed=31).reshape(copies, 6, 2)
    rng = np.random.default_rng(32)
    ref = np.stack([release_b(X0, sigma, rng, method="dense") for _ in range(copies)])
    assert stats.ks_2samp(M[:, 0, 0], ref[:, 0, 0]).pvalue < KS_LEVEL


# --------------------------------------------------------------------------- full Setting B

@pytest.mark.parametrize("chunks", [(100, 100, 100), (37, 2, 200, 61), (300,)])
def test_release_b_dask_keeps_the_gram_matrix(chunks):
    X = da.from_array(fixed_data(300, 3, seed=3), chunks=(chunks, (3,)))
    Y = scale.release_b_dask(X, 0.9, rng=41)
    assert Y.chunks[0] == chunks
    Y = Y.compute()
    M = documented_noisy(X, 0.9, seed=41)
    np.testing.assert_allclose(Y.T @ Y, M.T @ M, rtol=1e-10, atol=1e-9)


def test_noisy_data_dask_follows_the_documented_seeding():
    X = da.from_array(fixed_data(300, 3, seed=3), chunks=((37, 2, 200, 61), (3,)))
    np.testing.assert_array_equal(scale.noisy_data_dask(X, 0.9, rng=41).compute(), documented_noisy(X, 0.9, 41))


def test_release_b_dask_mixes_all_rows():
    # One Haar matrix over all rows: unlike the block release, a chunk's Gram is not kept.
    X = da.from_array(fixed_data(200, 2, seed=4), chunks=(50, 2))
    Y = scale.release_b_dask(X, 0.5, rng=1).compute()
    M = documented_noisy(X, 0.5, seed=1)
    np.testing.assert_allclose(Y.T @ Y, M.T @ M, rtol=1e-10, atol=1e-9)
    assert not np.allclose(Y[:50].T @ Y[:50], M[:50].T @ M[:50], rtol=0.05)


def test_release_b_dask_is_deterministic():
    X = scale.random_data_dask(500, 2, chunks=70, rng=8)
    a = scale.release_b_dask(X, 1.0, rng=5).compute(scheduler="threads")
    b = scale.release_b_dask(X, 1.0, rng=5).compute(scheduler="synchronous")
    np.testing.assert_array_equal(a, b)


def _many_releases(X0, sigma, copies, chunks, seed):
    X = da.from_array(X0, chunks=(chunks, (X0.shape[1],)))
    rng = np.random.default_rng(seed)
    outs = dask.compute(*[scale.release_b_dask(X, sigma, rng) for _ in range(copies)], optimize_graph=False)
    return np.stack(outs)


def test_release_b_dask_moments_match_theory():
    X0, sigma, copies = fixed_data(9, 2, seed=5), 0.6, 250
    Y = _many_releases(X0, sigma, copies, (3, 3, 3), seed=51)
    grams = np.einsum("kia,kib->kab", Y, Y)
    mean, se = grams.mean(axis=0), grams.std(axis=0, ddof=1) / np.sqrt(copies)
    truth = X0.T @ X0 + 9 * sigma**2 * np.eye(2)
    assert np.all(np.abs(mean - truth) < 5 * se), (mean, truth, se)


def test_release_b_dask_rows_follow_dense_reference():
    X0, sigma, copies = fixed_data(9, 2, seed=6), 0.6, 250
    Y = _many_releases(X0, sigma, copies, (4, 5), seed=61)
    rng = np.random.default_rng(62)
    ref = np.stack([release_b(X0, sigma, rng, method="dense") for _ in range(copies)])
    for stat in (lambda A: np.sum(A[:, 0] ** 2, axis=1), lambda A: A[:, 0, 0], lambda A: A[:, 8, 1]):
        assert stats.ks_2samp(stat(Y), stat(ref)).pvalue > KS_LEVEL


def test_stiefel_frame_dask_is_uniform():
    n, p, copies = 12, 3, 300
    rng = np.random.default_rng(71)
    frames = np.stack(dask.compute(*[scale.stiefel_frame_dask(n, p, rng, chunks=5) for _ in range(copies)],
                                  optimize_graph=False))
    gram_error = np.abs(np.einsum("kia,kib->kab", frames, frames) - np.eye(p)).max()
    assert gram_error < 1e-12
    # each column is uniform on the sphere S^{n-1}: U_ij^2 ~ Beta(1/2, (n-1)/2)
    for i, j in [(0, 0), (11, 2), (6, 1)]:
        assert stats.kstest(frames[:, i, j] ** 2, stats.beta(0.5, (n - 1) / 2).cdf).pvalue > KS_LEVEL
    # the sign fix matters: without it the first entry's sign would be biased
    assert abs(np.mean(frames[:, 0, 0] > 0) - 0.5) < 5 * 0.5 / np.sqrt(copies)


def test_stiefel_frame_dask_refuses_bad_shapes():
    with pytest.raises(ValueError, match="p must be <= n"):
        scale.stiefel_frame_dask(2, 3)
    with pytest.raises(ValueError, match="chunks"):
        scale.stiefel_frame_dask(10, 2, chunks=0)


# --------------------------------------------------------------------------- data, running, writing

def test_random_data_dask_is_bounded_and_seeded():
    a = scale.random_data_dask(1000, 3, chunks=300, rng=1)
    assert a.chunks == ((300, 300, 300, 100), (3,))
    values = a.compute()
    assert values.min() >= -1 and values.max() <= 1
    assert abs(values.mean()) < 5 * np.sqrt(1 / 3) / np.sqrt(values.size)
    np.testing.assert_array_equal(values, scale.random_data_dask(1000, 3, chunks=300, rng=1).compute())
    clipped = scale.random_data_dask(1000, 3, chunks=300, rng=1, distribution="normal").compute()
    assert clipped.min() == -1 and clipped.max() == 1
    with pytest.raises(ValueError, match="distribution"):
        scale.random_data_dask(10, 2, distribution="cauchy")


def test_write_npy_round_trips_and_shows_progress(tmp_path, capsys):
    X = scale.random_data_dask(1000, 3, chunks=128, rng=2)
    Y = scale.release_block_dask(X, 1.0, rng=3)
    path = scale.write_npy(Y, tmp_path / "release.npy", progress=True)
    assert "100% Completed" in capsys.readouterr().out
    np.testing.assert_array_equal(np.load(path), scale.compute(Y))
    quiet = scale.write_npy(Y.rechunk((128, 1)), tmp_path / "quiet.npy")
    assert capsys.readouterr().out == ""
    np.testing.assert_array_equal(np.load(quiet), np.load(path))


def test_write_npy_replaces_a_previous_file_atomically(tmp_path):
    target = tmp_path / "release.npy"
    np.save(target, np.arange(6.0))
    Y = scale.release_block_dask(scale.random_data_dask(400, 2, chunks=100, rng=4), 1.0, rng=5)
    path = scale.write_npy(Y, target, scheduler="threads")
    assert path == str(target)
    np.testing.assert_array_equal(np.load(target), Y.compute(scheduler="threads"))
    assert os.listdir(tmp_path) == ["release.npy"]


def _bad_release():
    X0 = fixed_data(400, 2, seed=9)
    X0[250, 1] = 3.0   # the third chunk raises when computed
    return scale.release_block_dask(da.from_array(X0, chunks=(100, 2)), 1.0, rng=0)


def _settled_listing(folder, expected, timeout=10.0):
    """The listing of ``folder`` once it equals ``expected`` or ``timeout`` seconds have passed.

    Tasks of a failed computation may still be running when the writer
    raises (the threaded scheduler does not wait for them); they must leave
    nothing behind when they finish.
    """
    import time

    stop = time.monotonic() + timeout
    while sorted(os.listdir(folder)) != expected and time.monotonic() < stop:
        time.sleep(0.05)
    return sorted(os.listdir(folder))


def _files(folder):
    return sorted(
        (os.path.relpath(os.path.join(d, f), folder), open(os.path.join(d, f), "rb").read())
        for d, _, fs in os.walk(folder) for f in fs
    )


@pytest.mark.parametrize("name, writer", [("r.npy", scale.write_npy), ("r.zarr", scale.write_zarr)])
@pytest.mark.parametrize("scheduler", ["threads", "synchronous"])
def test_failed_write_keeps_previous_output_and_leaves_nothing(tmp_path, name, writer, scheduler):
    pytest.importorskip("zarr")
    target = tmp_path / name
    # no previous file: nothing appears
    with pytest.raises(ValueError, match=r"row 250, column 1 is 3\.0"):
        writer(_bad_release(), target, scheduler=scheduler)
    assert _settled_listing(tmp_path, []) == []
    # a previous release: kept byte for byte
    good = scale.release_block_dask(scale.random_data_dask(400, 2, chunks=100, rng=6), 1.0, rng=7)
    writer(good, target, scheduler=scheduler)
    before = _files(tmp_path)
    with pytest.raises(ValueError, match="row 250"):
        writer(_bad_release(), target, scheduler=scheduler)
    assert _settled_listing(tmp_path, [name]) == [name]
    assert _files(tmp_path) == before


_SLOW_WRITER = """
import sys, time
import numpy as np
import dask.array as da
from dpmask import scale

target, writer = sys.argv[1], getattr(scale, sys.argv[2])

def slow(block):
    time.sleep(0.25)
    return block + 1.0

Y = da.from_array(np.zeros((4000, 2)), chunks=(100, 2)).map_blocks(slow, dtype=float)
writer(Y, target, scheduler="synchronous")
"""


def _hidden(folder):
    return sorted(n for n in os.listdir(folder) if n.startswith("."))


@pytest.mark.parametrize("name, writer", [("r.npy", "write_npy"), ("r.zarr", "write_zarr")])
@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM"])
def test_a_killed_writer_leaves_a_temporary_that_the_next_write_removes(tmp_path, name, writer, sig):
    """Issue 17: SIGKILL or SIGTERM of the writing process mid-write left a hidden
    ``.<name>.<hex>.tmp`` for ever (each write picks a new name).  A real process is killed
    here; the previous release must be intact, and the next write must remove the stale
    temporary and leave only the target, holding the new release."""
    import signal
    import time

    pytest.importorskip("zarr")
    target = tmp_path / name
    write = getattr(scale, writer)
    first = scale.release_block_dask(scale.random_data_dask(400, 2, chunks=100, rng=11), 1.0, rng=12)
    write(first, target)
    before = _files(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(target), writer], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        stop = time.monotonic() + 120  # hang guard only: the temporary appears within seconds
        while not _hidden(tmp_path) and proc.poll() is None and time.monotonic() < stop:
            time.sleep(0.05)
        assert _hidden(tmp_path), proc.communicate(timeout=60)
        time.sleep(0.5)  # a few chunks written
        proc.send_signal(getattr(signal, sig))
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == -getattr(signal, sig)
    stale = _hidden(tmp_path)
    assert len(stale) == 1 and re.fullmatch(rf"\.{re.escape(name)}\.[0-9a-f]{{12}}\.tmp", stale[0]), stale
    assert [f for f in _files(tmp_path) if not f[0].startswith(".")] == before  # the previous release intact
    second = scale.release_block_dask(scale.random_data_dask(400, 2, chunks=100, rng=13), 1.0, rng=14)
    write(second, target)
    assert sorted(os.listdir(tmp_path)) == [name]
    stored = np.load(target) if name.endswith(".npy") else __import__("zarr").open_array(str(target), mode="r")[:]
    np.testing.assert_array_equal(stored, second.compute())


@pytest.mark.parametrize("name, writer", [("r.npy", scale.write_npy), ("r.zarr", scale.write_zarr)])
def test_a_temporary_held_by_a_running_write_is_left_alone(tmp_path, name, writer):
    """The clean-up removes only temporaries no running write holds (an advisory lock):
    here the lock is held through a second open file description, as another process would."""
    pytest.importorskip("zarr")
    busy = tmp_path / f".{name}.0123456789ab.tmp"
    busy.write_bytes(b"in progress")
    fd = write._claim(str(busy))
    Y = scale.release_block_dask(scale.random_data_dask(200, 2, chunks=100, rng=15), 1.0, rng=16)
    try:
        writer(Y, tmp_path / name)
        assert busy.read_bytes() == b"in progress"
    finally:
        write._unclaim(fd)
    writer(Y, tmp_path / name)  # released: now stale, and removed
    assert sorted(os.listdir(tmp_path)) == [name]


def test_write_zarr_puts_back_an_array_a_killed_write_had_moved_aside(tmp_path):
    """Killed between moving the previous array aside and renaming the new one in place: the
    target is missing and the previous array sits in ``.tmp.old``.  The next write puts it
    back first, so that a failing write still leaves the previous release."""
    zarr = pytest.importorskip("zarr")
    good = scale.release_block_dask(scale.random_data_dask(400, 2, chunks=100, rng=17), 1.0, rng=18)
    aside = tmp_path / ".r.zarr.0123456789ab.tmp.old"
    scale.write_zarr(good, aside)
    with pytest.raises(ValueError, match="row 250"):
        scale.write_zarr(_bad_release(), tmp_path / "r.zarr", scheduler="synchronous")
    assert _settled_listing(tmp_path, ["r.zarr"]) == ["r.zarr"]
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "r.zarr"), mode="r")[:], good.compute())


def test_write_npy_replaces_the_file_atomically_not_in_place(tmp_path):
    """M32: os.replace swaps the inode; a copy-then-remove would rewrite the old file in place.
    A reader holding the old file open keeps reading the old bytes."""
    target = tmp_path / "r.npy"
    np.save(target, np.arange(6.0))
    old_bytes = target.read_bytes()
    old_inode = os.stat(target).st_ino
    Y = scale.release_block_dask(scale.random_data_dask(400, 2, chunks=100, rng=19), 1.0, rng=20)
    with open(target, "rb") as reader:
        scale.write_npy(Y, target)
        assert reader.read() == old_bytes
    assert os.stat(target).st_ino != old_inode
    np.testing.assert_array_equal(np.load(target), Y.compute())


def test_write_zarr_twice_leaves_one_array_holding_the_second_release(tmp_path):
    """M33: the previous array must be deleted once the new one is in place."""
    zarr = pytest.importorskip("zarr")
    one = scale.release_block_dask(scale.random_data_dask(400, 2, chunks=100, rng=21), 1.0, rng=22)
    two = scale.release_block_dask(scale.random_data_dask(400, 2, chunks=100, rng=23), 1.0, rng=24)
    scale.write_zarr(one, tmp_path / "r.zarr")
    scale.write_zarr(two, tmp_path / "r.zarr")
    assert sorted(os.listdir(tmp_path)) == ["r.zarr"]
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "r.zarr"), mode="r")[:], two.compute())


def test_write_zarr_to_a_symbolic_link_leaves_nothing_aside(tmp_path):
    """Issue 17: writing to a link to an array left ``.tmp.old`` (rmtree refuses links).  The
    link is replaced by the new array; the array it pointed to is left as it was."""
    zarr = pytest.importorskip("zarr")
    one = scale.release_block_dask(scale.random_data_dask(400, 2, chunks=100, rng=25), 1.0, rng=26)
    two = scale.release_block_dask(scale.random_data_dask(400, 2, chunks=100, rng=27), 1.0, rng=28)
    scale.write_zarr(one, tmp_path / "a.zarr")
    os.symlink(tmp_path / "a.zarr", tmp_path / "link.zarr")
    scale.write_zarr(two, tmp_path / "link.zarr")
    assert sorted(os.listdir(tmp_path)) == ["a.zarr", "link.zarr"]
    assert not os.path.islink(tmp_path / "link.zarr")
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "link.zarr"), mode="r")[:], two.compute())
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a.zarr"), mode="r")[:], one.compute())


def test_write_npy_refuses_a_path_that_ends_with_a_separator(tmp_path):
    """Issue 17: write_npy(Y, "dir/new/") wrote a file named ``new``."""
    (tmp_path / "dir").mkdir()
    Y = scale.release_block_dask(scale.random_data_dask(200, 2, chunks=100, rng=29), 1.0, rng=30)
    with pytest.raises(ValueError, match="path must name a file.*ends with a path separator"):
        scale.write_npy(Y, str(tmp_path / "dir" / "new") + os.sep)
    assert os.listdir(tmp_path / "dir") == []
    with pytest.raises(TypeError, match="progress"):
        scale.write_npy(Y, tmp_path / "dir" / "r.npy", progress="no")


def test_write_zarr_round_trips_unequal_chunks(tmp_path):
    zarr = pytest.importorskip("zarr")
    X = da.from_array(fixed_data(1000, 3, seed=8), chunks=(scale.balanced_chunks(1000, 300), (3,)))
    Y = scale.release_b_dask(X, 1.0, rng=2)
    path = scale.write_zarr(Y, tmp_path / "release.zarr")
    stored = zarr.open_array(path, mode="r")
    assert stored.fill_value is not None and np.isnan(stored.fill_value)  # unwritten reads NaN, not 0
    np.testing.assert_array_equal(stored[:], Y.compute())
    np.testing.assert_array_equal(da.from_zarr(path).compute(), Y.compute())


def test_writers_refuse_bad_targets(tmp_path):
    pytest.importorskip("zarr")
    Y = scale.release_block_dask(scale.random_data_dask(200, 2, chunks=100, rng=1), 1.0, rng=1)
    with pytest.raises(ValueError, match="existing directory"):
        scale.write_npy(Y, tmp_path / "missing" / "r.npy")
    with pytest.raises(ValueError, match="is a directory"):
        scale.write_npy(Y, tmp_path)
    (tmp_path / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match="not a Zarr array"):
        scale.write_zarr(Y, tmp_path / "notes.txt")
    with pytest.raises(ValueError, match="not a Zarr array"):
        scale.write_zarr(Y, tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "keep me"
    with pytest.raises(ValueError, match="Y must be"):
        scale.write_npy(np.zeros((3, 2)), tmp_path / "r.npy")
    with pytest.raises(ValueError, match="path must be a str"):
        scale.write_zarr(Y, float("nan"))


def test_bench_scale_quick_runs():
    env = dict(os.environ, MPLBACKEND="Agg")
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_scale.py"), "--quick"],
        capture_output=True, text=True, timeout=120, env=env, cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "slope" in run.stdout and "peak memory" in run.stdout


@pytest.mark.parametrize("n, target", [(10, 4), (10**7 + 13, 200_000), (7, 7), (1000, 1), (999, 500)])
def test_balanced_chunks_sum_to_n_and_differ_by_one(n, target):
    sizes = scale.balanced_chunks(n, target)
    assert sum(sizes) == n and max(sizes) - min(sizes) <= 1
    assert len(sizes) == max(1, round(n / target))


def test_balanced_chunks_refuses_bad_targets():
    with pytest.raises(ValueError, match="target must be <= n"):
        scale.balanced_chunks(5, 6)
    with pytest.raises(ValueError, match="target"):
        scale.balanced_chunks(5, 0)


def test_size_caps_refuse_with_named_arguments():
    # Beyond MAX_CHUNKS row chunks a graph takes minutes to build; refuse before building it
    # (how fast, against building a small graph, is timed in benchmarks/bench_guards.py).
    with pytest.raises(ValueError, match=r"target must be >= 10000000 for n=1000000000000, got 7"):
        scale.balanced_chunks(1e12, 7)
    with pytest.raises(ValueError, match=r"chunks must be >= 10000000 .*got 1000000"):
        scale.random_data_dask(10**12, 3, chunks=10**6)
    with pytest.raises(ValueError, match=r"chunks must be >= "):
        scale.stiefel_frame_dask(10**12, 2, chunks=1000)
    with pytest.raises(ValueError, match=r"chunks must be <= 44739242 for p=3"):
        scale.random_data_dask(10**9, 3, chunks=10**9)
    with pytest.raises(ValueError, match=r"p must be <= 2\*\*27"):
        scale.random_data_dask(10, 2**28)
    with pytest.raises(ValueError, match=r"n must be .*<= 2\*\*53"):
        scale.balanced_chunks(2**53 + 1, 2**40)
    with pytest.raises(ValueError, match=r"X gives 100001 row chunks"):
        scale.release_block_dask(da.zeros((300_003, 2), chunks=(3, 2)), 1.0)
    # at the cap itself the sizes are right
    sizes = scale.balanced_chunks(10**12, 10**7)
    assert len(sizes) == scale.MAX_CHUNKS and sum(sizes) == 10**12
    assert scale.balanced_chunks(2**53, 2**53) == (2**53,)


def test_sigma_and_scheduler_domains():
    X = da.zeros((40, 2), chunks=(20, 2))
    for release in (scale.release_block_dask, scale.release_b_dask, scale.noisy_data_dask):
        with pytest.raises(ValueError, match=r"sigma must be <= 1e150"):
            release(X, 1e151, rng=0)
        with pytest.raises(ValueError, match=r"sigma must be a single number"):
            release(X, [1.0, 2.0], rng=0)
        # the edges of the domain give finite releases
        for sigma in (scale.MAX_SIGMA, 1e-300):
            assert np.isfinite(release(X + 0.5, sigma, rng=0).compute()).all()
    with pytest.raises(ValueError, match="Y must be a dask.array.Array"):
        scale.compute(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="scheduler must be"):
        scale.compute(X, scheduler="gpu")
    with pytest.raises(ValueError, match="scheduler must be"):
        scale.write_npy(X, "unused.npy", scheduler=3)


@pytest.mark.parametrize("dtype", [np.complex128, object, "U3"])
def test_non_real_dask_arrays_are_refused(dtype):
    X = da.zeros((40, 2), chunks=(20, 2), dtype=dtype)
    with pytest.raises(ValueError, match="X must hold real numbers"):
        scale.release_block_dask(X, 1.0)
    with pytest.raises(ValueError, match="X must hold real numbers"):
        scale.release_b_dask(X, 1.0)


# --------------------------------------------------------------------------- the chapter's explorer

def test_block_numbers_price_of_blocks():
    widgets = pytest.importorskip("dpmask.widgets")
    pytest.importorskip("ipywidgets")
    from dpmask.paper import bounds

    one = widgets.block_numbers(0.1, 1e-3, 10**5, 10, 10**5)
    assert one["blocks"] == 1 and one["smallest"] == 10**5 and one["price"] == 1.0
    vals = widgets.block_numbers(0.1, 1e-3, 10**5 + 7, 10, 1000)
    # 100 blocks of 1000 or 1001 rows: the smallest has 1000 rows
    assert vals["blocks"] == 100 and vals["smallest"] == 1000
    # Theorem 3.4's sigma is decreasing in n, so cutting into blocks costs noise
    assert vals["sigma_block"] > vals["sigma_full"] and vals["price"] > 1
    assert vals["sigma_block"] == bounds.sigma_b(0.1, 1e-3, 1000, 10)
    # chapter 8's operation counts: QR of the block (4/3 b^3), forming Q (4/3 b^3), the product (2 b^2 p)
    assert vals["dense_flops_per_row"] == pytest.approx(8 / 3 * 1000**2 + 2 * 1000 * 10)
    assert vals["frame_flops_per_row"] == pytest.approx(6 * 10**2)
    with pytest.raises(ValueError, match=r"block must (exceed p|satisfy p=10 < block)"):
        widgets.block_numbers(0.1, 1e-3, 1000, 10, 10)


def test_block_explorer_reacts_to_its_sliders():
    widgets = pytest.importorskip("dpmask.widgets")
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib")
    box = widgets.block_explorer(eps=0.1, delta=1e-3, n=10**5, p=10, block=1000)
    before = box.children[1].value
    assert "data-key='price'" in before and len(box.children[2].value) > 0
    box.children[0].children[3].value = 100.0   # smaller blocks: a higher price
    assert box.children[1].value != before
    box.children[0].children[3].value = 5.0     # not more rows than columns
    assert "more rows than columns" in box.children[1].value
    fig = widgets.block_figure(p_values=(1, 10), delta_values=(1e-3,), n=10**5)
    assert len(fig.axes[0].lines) == 2
