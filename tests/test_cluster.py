"""dpmask.scale on a real Dask cluster: worker processes, a lost worker, the writers.

A ``dask.distributed.LocalCluster`` with two worker *processes* (one thread
each, every port on 127.0.0.1) stands in for a cluster: tasks and their
results cross process boundaries by pickling, as they do between machines.
Truths used: the threaded scheduler's result of the same graph (the releases
key their randomness by block, so any scheduler must give the same bits) and
the in-memory release for the writers' files.  Data are small so the file
runs in about a minute.
"""

import os
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
zarr = pytest.importorskip("zarr")

from dpmask import scale  # noqa: E402

N, P, ROWS = 2_400, 3, 300   # 8 row chunks of 300 rows
SIGMA = 0.8


def _two_worker_client():
    """A client of a fresh two-process LocalCluster (closed, with the cluster, when the caller ends).

    Each nanny writes its workers' pre-spawn variables (``MALLOC_TRIM_THRESHOLD_=65536`` and one
    thread for OpenMP, MKL and OpenBLAS) into *this* process's ``os.environ``, where every later
    subprocess would inherit them: in one pytest session the chapters' kernels did, and the glibc
    trim threshold made chapter 7a's Monte Carlo cells 2.5 times slower (its cell 12: 23-35 s
    against 11 s).  The environment is restored when the cluster closes.
    """
    environ = dict(os.environ)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True,
        host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=40,
    )
    client = distributed.Client(cluster, set_as_default=False)
    try:
        client.wait_for_workers(2, timeout=60)
        yield client
    finally:
        client.close()
        cluster.close()
        for key in set(os.environ) - set(environ):  # never an empty environment, even for a moment
            del os.environ[key]
        os.environ.update(environ)


@pytest.fixture(scope="module")
def client():
    """One cluster for every test of this file that leaves its workers alive."""
    yield from _two_worker_client()


@pytest.fixture(scope="module")
def killable_client():
    """A cluster of its own for the tests that kill a worker, so that no other test meets the
    replacement process or a scheduler still recovering from the loss."""
    yield from _two_worker_client()


def test_a_cluster_leaves_the_environment_of_this_process_as_it_found_it():
    before = dict(os.environ)
    clients = _two_worker_client()
    next(clients)
    try:
        if dict(os.environ) == before:
            pytest.skip("this version of distributed no longer writes its workers' variables into os.environ")
    finally:
        clients.close()
    assert dict(os.environ) == before, {k: os.environ.get(k) for k in set(os.environ) ^ set(before)}


def data(seed=0):
    return scale.random_data_dask(N, P, chunks=ROWS, rng=seed)


def releases(X):
    return {
        "block": scale.release_block_dask(X, SIGMA, rng=7),
        "full": scale.release_b_dask(X, SIGMA, rng=7),
        "noisy": scale.noisy_data_dask(X, SIGMA, rng=7),
    }


def test_cluster_has_two_worker_processes(client):
    pids = client.run(os.getpid)
    assert len(pids) == 2 and os.getpid() not in pids.values()
    assert len(set(pids.values())) == 2


@pytest.mark.parametrize("kind", ["block", "full", "noisy"])
def test_release_on_worker_processes_is_bit_identical(client, kind):
    threaded = releases(data())[kind].compute(scheduler="threads")
    on_cluster = releases(data())[kind].compute(scheduler=client)
    np.testing.assert_array_equal(on_cluster, threaded)
    # and the graph really ran on both workers
    assert len(client.run(os.getpid)) == 2


def _die_once(X_b, marker, block_info=None):
    """Identity on every chunk, except that the first task to reach chunk 5 kills its worker."""
    if block_info[0]["chunk-location"][0] == 5:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return X_b
        os.close(fd)
        time.sleep(0.2)   # let the other worker hold results of its own
        os._exit(1)       # the process dies without cleaning up, as on a lost machine
    return X_b


@pytest.mark.parametrize("kind", ["block", "full"])
def test_release_survives_a_killed_worker(killable_client, kind, tmp_path):
    client = killable_client
    marker = str(tmp_path / f"killed-{kind}")
    pids_before = set(client.run(os.getpid).values())
    threaded = releases(data())[kind].compute(scheduler="threads")
    X = data().map_blocks(_die_once, marker, dtype=np.float64)
    on_cluster = releases(X)[kind].compute(scheduler=client)
    assert os.path.exists(marker), "no worker was killed"
    np.testing.assert_array_equal(on_cluster, threaded)
    # the nanny replaced the dead process: a new worker pid
    client.wait_for_workers(2, timeout=60)
    assert set(client.run(os.getpid).values()) != pids_before


@pytest.mark.parametrize("writer, read", [
    (scale.write_npy, np.load),
    (scale.write_zarr, lambda path: zarr.open_array(path, mode="r")[:]),
])
def test_writer_on_cluster_matches_in_memory_release(client, tmp_path, writer, read):
    # unequal row chunks, as balanced_chunks gives them
    X = da.from_array(data(3).compute(), chunks=(scale.balanced_chunks(N - 7, 250) + (7,), (P,)))
    Y = scale.release_b_dask(X, SIGMA, rng=11)
    in_memory = Y.compute(scheduler="threads")
    path = writer(Y, tmp_path / "release", scheduler=client)
    np.testing.assert_array_equal(read(path), in_memory)
    assert os.listdir(tmp_path) == ["release"]


def _failing_release():
    X0 = data(4).compute()
    X0[1_650, 2] = 1.5   # chunk 5 raises when computed: entries must lie in [-1, 1]
    return scale.release_block_dask(da.from_array(X0, chunks=(ROWS, P)), SIGMA, rng=13)


def _settled_listing(folder, expected, timeout=10.0):
    """The directory listing once it equals ``expected`` or ``timeout`` seconds have passed.

    Tasks of a failed computation may still be running on a worker when the
    writer raises; they must leave nothing behind when they finish.
    """
    stop = time.monotonic() + timeout
    while sorted(os.listdir(folder)) != expected and time.monotonic() < stop:
        time.sleep(0.1)
    return sorted(os.listdir(folder))


def _snapshot(path):
    """Every file under path with its bytes and modification time."""
    if os.path.isfile(path):
        return {"": (open(path, "rb").read(), os.stat(path).st_mtime_ns)}
    out = {}
    for folder, _, files in os.walk(path):
        for name in files:
            full = os.path.join(folder, name)
            out[os.path.relpath(full, path)] = (open(full, "rb").read(), os.stat(full).st_mtime_ns)
    return out


@pytest.mark.parametrize("writer", [scale.write_npy, scale.write_zarr])
def test_failed_write_leaves_previous_file_untouched(client, tmp_path, writer):
    target = tmp_path / "release"
    good = scale.release_block_dask(data(5), SIGMA, rng=13)
    writer(good, target, scheduler=client)
    before = _snapshot(target)
    with pytest.raises(ValueError, match=r"row 1650, column 2 is 1\.5"):
        writer(_failing_release(), target, scheduler=client)
    assert _settled_listing(tmp_path, ["release"]) == ["release"], "a temporary file was left behind"
    assert _snapshot(target) == before


@pytest.mark.parametrize("writer", [scale.write_npy, scale.write_zarr])
def test_failed_write_leaves_no_output(client, tmp_path, writer):
    with pytest.raises(ValueError, match="row 1650"):
        writer(_failing_release(), tmp_path / "release", scheduler=client)
    assert _settled_listing(tmp_path, []) == []


def test_default_client_is_used_without_scheduler_argument(client, tmp_path):
    # A user who creates a Client gets the cluster without passing it around.  The shared
    # cluster's own client is not the default (set_as_default=False); the one made here is.
    Y = scale.release_block_dask(data(6), SIGMA, rng=17)
    expected = Y.compute(scheduler="threads")
    with distributed.Client(client.scheduler.address) as default_client:
        assert distributed.default_client() is default_client
        with distributed.get_task_stream(default_client) as stream:
            path = scale.write_npy(Y, tmp_path / "r.npy")
        assert len(stream.data) >= len(Y.chunks[0]), "the tasks did not run on the cluster"
    np.testing.assert_array_equal(np.load(path), expected)
