"""Computing and writing a Dask release: chunk by chunk, put in place atomically.

:func:`compute` evaluates a release (optionally with a progress bar, on any scheduler);
:func:`write_npy` (one ``.npy`` file) and :func:`write_zarr` (a Zarr array, one file per
chunk) write it chunk by chunk to a hidden temporary file or directory beside the target, each
task opening it by name, and put it in place only when every chunk is written
(``os.replace``, atomic for a file).  A computation that fails leaves no output and any
previous file untouched.  A write whose process is killed (SIGKILL, SIGTERM) runs no clean-up;
its hidden temporary, which it held under an advisory lock, is removed by the next write to
the same target (a temporary still locked by a running write is left alone).

The target must be on a file system every worker mounts (the final rename runs on the
client's machine).  The releases themselves are in :mod:`dpmask.scale`, which re-exports
these functions; ``tests/test_scale.py`` and ``tests/test_cluster.py`` check them.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import uuid
from contextlib import nullcontext

import numpy as np

from ._dask import check_scheduler, import_dask
from .._validate import check_flag

try:  # advisory locks mark a temporary as owned by a running write (POSIX)
    import fcntl
except ImportError:  # pragma: no cover - Windows: stale temporaries are then left alone
    fcntl = None

__all__ = ["compute", "write_npy", "write_zarr"]

# ---------------------------------------------------------------------------
# running: progress bar, writing chunk by chunk
# ---------------------------------------------------------------------------

def _progress(progress):
    if progress:
        from dask.diagnostics import ProgressBar

        return ProgressBar()
    return nullcontext()


def compute(Y, *, progress=False, scheduler=None):
    """Compute a lazy release into memory, optionally with Dask's progress bar.

    Parameters
    ----------
    Y : dask.array.Array
    progress : bool
        Show Dask's ``dask.diagnostics.ProgressBar`` (for long runs; local
        schedulers only).
    scheduler : str, dask.distributed.Client or None
        Passed to ``dask.compute``: a name such as ``"threads"`` or
        ``"synchronous"`` (for debugging), a Client, or ``None`` for Dask's
        default (a ``dask.distributed.Client`` once one has been created).

    Returns
    -------
    ndarray
    """
    dask, da = import_dask()
    if not isinstance(Y, da.Array):
        raise ValueError(f"Y must be a dask.array.Array, got {type(Y).__name__}")
    scheduler = check_scheduler(scheduler)
    with _progress(progress):
        (out,) = dask.compute(Y, scheduler=scheduler)
    return out


def _check_release(Y):
    _, da = import_dask()
    if not isinstance(Y, da.Array) or Y.ndim != 2:
        raise ValueError("Y must be a 2-D dask.array.Array")
    if any(math.isnan(c) for c in Y.chunks[0]):
        raise ValueError("Y has unknown row chunk sizes; call Y.compute_chunk_sizes() first")
    if len(Y.chunks[1]) != 1:
        Y = Y.rechunk({1: -1})
    return Y


def _target_path(path, *, file=False):
    """Absolute target path, its directory checked; a hidden temporary name beside it.

    With *file* true a path that ends with a separator (``"dir/new/"``) is refused: it names
    a directory, and ``abspath`` would silently drop the slash and write a file ``new``.
    """
    try:
        raw = os.fspath(path)
    except TypeError as exc:
        raise ValueError(f"path must be a str or os.PathLike, got {type(path).__name__}") from exc
    if isinstance(raw, bytes):
        raw = os.fsdecode(raw)
    seps = tuple(s for s in (os.sep, os.altsep) if s)
    if file and raw.endswith(seps):
        raise ValueError(f"path must name a file, but {raw!r} ends with a path separator (a directory)")
    path = os.path.abspath(raw)
    folder, base = os.path.split(path)
    if not os.path.isdir(folder):
        raise ValueError(f"path must be in an existing directory, but {folder!r} does not exist")
    tmp = os.path.join(folder, f".{base}.{uuid.uuid4().hex[:12]}.tmp")
    return path, tmp


# --------------------------------------------------------------------------- stale temporaries
#
# A write holds an advisory lock (flock) on its hidden temporary from the moment it creates it
# until it has been renamed into place or removed.  A process killed by SIGKILL or SIGTERM in
# between runs no clean-up, but the kernel drops its locks: an unlocked temporary of the same
# target is stale, and the next write to that target removes it (_remove_stale).


def _claim(tmp):
    """Open the new temporary *tmp* (file or directory) and lock it; return the descriptor."""
    fd = os.open(tmp, os.O_RDONLY)
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def _unclaim(fd):
    if fd is not None:
        os.close(fd)  # closing the descriptor releases the lock


def _in_use(name):
    """True if a running write holds *name* (or if that cannot be told: no locks, no access)."""
    if fcntl is None:
        return True
    try:
        fd = os.open(name, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _discard(name):
    """Remove a file, a symbolic link or a directory tree (a Zarr store) named *name*."""
    if os.path.islink(name) or not os.path.isdir(name):
        _remove(name)
    else:
        _abandon_zarr(name)


def _remove_stale(path):
    """Remove the hidden temporaries that killed writes to *path* left behind.

    The names are those :func:`_target_path` gives (``.<name>.<12 hex>.tmp``) and the
    ``.tmp.old`` aside which :func:`write_zarr` moves a previous array.  A temporary that a
    running write holds (locked) is left alone.  A stale ``.tmp.old`` is the previous array:
    it is put back at *path* if the write was killed after moving it aside and before
    putting the new one in place (then *path* is missing), and removed otherwise.
    """
    folder, base = os.path.split(path)
    pattern = re.compile(rf"\.{re.escape(base)}\.[0-9a-f]{{12}}\.tmp(\.old)?")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        match = pattern.fullmatch(name)
        if match is None:
            continue
        full = os.path.join(folder, name)
        if match.group(1):
            owner = full[: -len(".old")]
            if _in_use(owner):
                continue
            if not os.path.lexists(path):
                os.replace(full, path)
            else:
                _discard(full)
        elif not _in_use(full):
            _discard(full)


class _NpyRowWriter:
    """A ``da.store`` target that writes row slices into a C-ordered .npy file.

    It holds the file's *path*, not an open descriptor: every chunk's task
    opens the file itself (``O_WRONLY`` without ``O_CREAT``, so a straggling
    task cannot recreate a temporary file that was already removed), writes
    its rows with ``pwrite`` and closes it.  That works in worker processes
    and on other machines that see the same file system.  Nothing written
    stays resident in memory, unlike a memory map.
    """

    def __init__(self, path, data_offset, shape, dtype):
        self.path, self.data_offset = path, data_offset
        self.shape, self.dtype = shape, np.dtype(dtype)
        self.row_bytes = int(np.prod(shape[1:], dtype=np.int64)) * self.dtype.itemsize

    def __setitem__(self, key, value):
        rows = key[0] if isinstance(key, tuple) else key
        rest = key[1:] if isinstance(key, tuple) else ()
        if any(k != slice(0, s, None) and k != slice(None) for k, s in zip(rest, self.shape[1:])):
            raise ValueError("write_npy needs whole rows in every chunk (one column chunk)")
        start = rows.start or 0
        data = np.ascontiguousarray(value, dtype=self.dtype)
        fd = os.open(self.path, os.O_WRONLY)
        try:
            view, offset = memoryview(data).cast("B"), self.data_offset + start * self.row_bytes
            while view:  # pwrite may write fewer bytes than asked
                written = os.pwrite(fd, view, offset)
                view, offset = view[written:], offset + written
        finally:
            os.close(fd)


def _fsync(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def write_npy(Y, path, *, progress=False, scheduler=None):
    """Write a lazy release to a ``.npy`` file chunk by chunk, replacing ``path`` only on success.

    The rows go to a hidden temporary file beside ``path``; each chunk's task
    opens that file by name, writes its rows at their place and closes it, so
    memory stays at a few chunks however large ``Y`` is, and the tasks may
    run in other processes or on other machines (``path`` must then be on a
    file system that every worker sees).  Only when every chunk is written
    is the file synced and renamed onto ``path`` with ``os.replace``,
    which is atomic: a reader sees the previous file or the finished new
    one, never a half-written one.  If the computation fails, the temporary
    file is removed, the error is raised again, and a previous file at
    ``path`` is left untouched.  Read the result with
    ``np.load(path, mmap_mode="r")``.

    If an earlier write to ``path`` was killed (SIGKILL or SIGTERM: no
    clean-up runs), its temporary ``.<name>.<hex>.tmp`` is stale; this write
    removes it first.  A write holds an advisory lock (``flock``) on its
    temporary, so one still running, in this or another process, is left
    alone.  A symbolic link at ``path`` is replaced by the file, as
    ``os.replace`` does.

    Parameters
    ----------
    Y : dask.array.Array, shape (n, p)
        For example the output of :func:`dpmask.scale.release_block_dask` or
        :func:`dpmask.scale.release_b_dask`; row chunks of any known sizes.
    path : str or os.PathLike
        File to write, in an existing directory (replaced if it exists); a
        path ending with a separator names a directory and is refused.
    progress : bool
        Show Dask's progress bar (local schedulers only).
    scheduler : str, dask.distributed.Client or None
        Passed to ``dask.array.store``; ``None`` uses Dask's default (a
        ``dask.distributed.Client`` once one has been created).

    Returns
    -------
    str
        The absolute path written.

    Raises
    ------
    ValueError
        If ``Y`` is not a 2-D Dask array, the directory of ``path`` does not
        exist, or ``path`` is (or ends like) a directory.
    TypeError
        If ``progress`` is not a bool.
    """
    _, da = import_dask()
    Y = _check_release(Y)
    scheduler = check_scheduler(scheduler)
    progress = check_flag(progress, "progress")
    path, tmp = _target_path(path, file=True)
    if os.path.isdir(path):
        raise ValueError(f"path must name a file, but {path!r} is a directory")
    _remove_stale(path)
    dtype = np.dtype(Y.dtype)
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": Y.shape}
    claim = None
    try:
        with open(tmp, "xb") as fh:
            claim = _claim(tmp)
            np.lib.format.write_array_header_1_0(fh, header)
            data_offset = fh.tell()
            fh.truncate(data_offset + Y.shape[0] * Y.shape[1] * dtype.itemsize)
        target = _NpyRowWriter(tmp, data_offset, Y.shape, dtype)
        with _progress(progress):
            da.store(Y, target, lock=False, scheduler=scheduler)
        _fsync(tmp)
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise
    finally:
        _unclaim(claim)
    return path


_ZARR_META = "zarr.json"


class _ZarrRowWriter:
    """A ``da.store`` target that opens an existing Zarr array by path in every task.

    When a write fails, the writer deletes the array's metadata first and
    then the directory (:func:`_abandon_zarr`); tasks of the failed
    computation may still be running.  A task opens the array with
    ``mode="r+"``, which fails once the metadata is gone, and checks again
    *after* writing its chunk: Zarr creates missing directories when it
    writes, so a chunk that lands after the clean-up would recreate the
    temporary store, and the task then removes it itself.  Every write, and
    every failed open or write, is followed by its own check, so nothing is
    left behind.
    """

    def __init__(self, path):
        self.path = path

    def __setitem__(self, key, value):
        import zarr

        try:
            zarr.open_array(store=self.path, mode="r+")[key] = value
        except BaseException:
            self._clear_if_abandoned()
            raise
        if self._clear_if_abandoned():
            raise FileNotFoundError(f"the write to {self.path} was abandoned")

    def _clear_if_abandoned(self):
        """Remove the temporary store if its metadata is gone; True if it was.

        Opening a store for writing creates its directory (zarr's ``LocalStore``
        makes its root), so a task that starts after the clean-up recreates the
        temporary directory even when the open then fails for want of metadata:
        the check runs after a failed write as after a successful one.
        """
        if os.path.exists(os.path.join(self.path, _ZARR_META)):
            return False
        shutil.rmtree(self.path, ignore_errors=True)
        return True


def _abandon_zarr(tmp):
    try:
        os.remove(os.path.join(tmp, _ZARR_META))
    except FileNotFoundError:
        pass
    shutil.rmtree(tmp, ignore_errors=True)


def _is_zarr_array(path):
    return any(os.path.isfile(os.path.join(path, meta)) for meta in (_ZARR_META, ".zarray"))


def write_zarr(Y, path, *, progress=False, scheduler=None):
    """Write a lazy release to a local Zarr array (a directory), replacing ``path`` only on success.

    Zarr is the chunked array store that Dask writes to in parallel (it is
    what ``dask.array.to_zarr`` writes): every chunk is its own file, so
    worker processes and machines write their chunks directly, with no
    shared file handle.  As :func:`write_npy`, the array is first written
    to a hidden temporary directory beside ``path``; only when every chunk
    is written does it take the place of ``path`` (a previous Zarr array
    there is moved aside and deleted only after the new one is in place).
    If the computation fails, the temporary directory is removed and a
    previous array at ``path`` is left untouched.  Unwritten chunks of a
    Zarr array read as its fill value, set here to NaN for a float array
    (every release is one), not to zeros.  As for :func:`write_npy`, the
    stale temporaries of a killed write to ``path`` are removed by the next
    write (a previous array that a killed write had moved aside, to
    ``.<name>.<hex>.tmp.old``, is put back first if ``path`` is missing).
    A symbolic link at ``path`` to a Zarr array is replaced by the new array;
    the array it pointed to is left as it was.
    Read the result with ``zarr.open_array(path, mode="r")[:]`` or
    ``dask.array.from_zarr(path)``.

    Object stores (``s3://...``) have no atomic rename; this function takes
    local (or shared network file system) paths only.  To write to object
    storage, call ``dask.array.to_zarr(Y.rechunk(...), url)`` yourself and
    treat the store as unfinished until that call returns.

    Parameters
    ----------
    Y : dask.array.Array, shape (n, p)
        A release; its row chunks may differ in size (they are rechunked to
        Zarr's regular chunks of the largest row chunk, which does not
        change any value).
    path : str or os.PathLike
        Directory to create, in an existing directory.  If it exists it must
        be a Zarr array (it is then replaced); any other file or directory
        there is refused rather than deleted.
    progress, scheduler
        As in :func:`write_npy`.

    Returns
    -------
    str
        The absolute path of the Zarr array.

    Raises
    ------
    ValueError
        If ``path`` holds something other than a Zarr array, its directory does
        not exist, or ``Y`` is not a 2-D Dask array.
    ImportError
        If ``zarr`` is not installed (``pip install 'dpmask[scale]'``).
    """
    _, da = import_dask()
    try:
        import zarr
    except ImportError as exc:  # pragma: no cover - exercised only without zarr
        raise ImportError("write_zarr needs zarr: pip install 'dpmask[scale]'") from exc
    Y = _check_release(Y)
    scheduler = check_scheduler(scheduler)
    progress = check_flag(progress, "progress")
    path, tmp = _target_path(path)
    _remove_stale(path)
    if os.path.lexists(path) and not (os.path.isdir(path) and _is_zarr_array(path)):
        raise ValueError(f"path {path!r} exists and is not a Zarr array; refusing to replace it")
    rows = max(Y.chunks[0])
    Y = Y.rechunk({0: rows})  # Zarr needs regular chunks: one task per Zarr chunk, no shared chunk
    claim = None
    try:
        os.mkdir(tmp)
        claim = _claim(tmp)
        zarr.create_array(store=tmp, shape=Y.shape, chunks=(rows, Y.shape[1]),
                          dtype=Y.dtype, fill_value=np.nan if Y.dtype.kind in "fc" else None,
                          zarr_format=3)
        with _progress(progress):
            da.store(Y, _ZarrRowWriter(tmp), lock=False, scheduler=scheduler)
        old = None
        if os.path.lexists(path):
            old = f"{tmp}.old"
            os.replace(path, old)
        try:
            os.replace(tmp, path)
        except BaseException:
            if old is not None:
                os.replace(old, path)
            raise
        if old is not None:
            _discard(old)  # a symbolic link is unlinked (rmtree refuses links), an array removed
    except BaseException:
        _abandon_zarr(tmp)
        raise
    finally:
        _unclaim(claim)
    return path
