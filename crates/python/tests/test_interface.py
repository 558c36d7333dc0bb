"""The Python conventions: zero-copy input, a reusable pool, the GIL
released during work, Ctrl-C, exceptions of the right class, and the
machine tools as plain data."""

import os
import resource
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

import numakit
from numakit import _numakit


def test_input_buffers_are_read_in_place():
    t = pa.table({"k": np.arange(100_000), "s": [str(i) for i in range(100_000)]})
    seen = set(_numakit.buffer_addresses(t))
    for column in t.columns:
        for chunk in column.chunks:
            for buf in chunk.buffers():
                if buf is not None and buf.size > 0:
                    assert buf.address in seen, "numakit read a copy of the column"


def test_a_large_input_is_not_copied():
    rows = 24_000_000  # 2 x 192 MB of int64
    # Made in place, so that the high-water mark before the call is the
    # input itself (pyarrow wraps NumPy's memory without copying).
    keys = np.arange(rows, dtype=np.int64)
    np.remainder(keys, 1000, out=keys)
    k = pa.array(keys)
    v = pa.array(np.ones(rows, dtype=np.int64))
    t = pa.table({"k": k, "v": v})
    input_bytes = t.nbytes
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result = numakit.aggregate(t, "k", ["count", "sum:v"])
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert result.num_rows == 1000
    assert sum(result.column("sum_v").to_pylist()) == rows
    # A copy of the input would raise the high-water mark by its size.
    assert after - before < input_bytes // 4, (after - before, input_bytes)


def test_a_pool_is_made_once_and_reused():
    pool = numakit.Pool(threads=1)
    assert pool.threads == 1 and pool.nodes and pool.placement == "best-effort"
    t = pa.table({"k": [3, 1, 2]})
    for _ in range(3):
        assert numakit.sort(t, "k", pool=pool).column("k").to_pylist() == [1, 2, 3]
    numakit.sort(t, "k", threads=1)
    shared = numakit._pools[1]
    numakit.sort(t, "k", threads=1)
    assert numakit._pools[1] is shared
    with pytest.raises(numakit.BadInputError):
        numakit.sort(t, "k", pool=pool, threads=2)
    assert "threads=1" in repr(pool)


def test_the_interpreter_runs_other_threads_during_a_call():
    n = 8_000_000
    t = pa.table({"k": np.random.default_rng(0).integers(0, 2**62, n)})
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=ticker)
    started = time.perf_counter()
    thread.start()
    numakit.sort(t, "k", threads=1)
    ended = time.perf_counter()
    done.set()
    thread.join()
    during = [x for x in ticks if started < x < ended]
    # With the GIL held throughout, the ticker could not run at all.
    assert len(during) > (ended - started) * 100, (len(during), ended - started)


CHILD = textwrap.dedent(
    """
    import sys, time, numpy as np, pyarrow as pa, numakit
    n = 40_000_000
    t = pa.table({"k": np.random.default_rng(1).integers(0, 2**62, n), "v": np.arange(n)})
    print("start", flush=True)
    started = time.perf_counter()
    try:
        numakit.sort(t, "k", progress=True, threads=1)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted after {time.perf_counter() - started:.2f}", flush=True)
    """
)


def test_ctrl_c_interrupts_a_long_call():
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "start"
    time.sleep(0.3)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert "interrupted after" in out, (out, err)
    # The call stopped at its next phase boundary, long before its last
    # phase (about 2 s into the call on these machines).
    assert "numakit sort: code keys" in err
    assert "gather columns" not in err, err


def test_errors_are_exceptions_of_the_right_class():
    t = pa.table({"k": [1, 2], "l": pa.array([[1], [2]])})
    with pytest.raises(numakit.BadInputError, match='"missing" not found'):
        numakit.sort(t, "missing")
    with pytest.raises(ValueError):
        numakit.aggregate(t, "missing")
    with pytest.raises(numakit.BadInputError, match='"l"'):
        numakit.join(t, t, on="l")
    with pytest.raises(numakit.BadInputError, match="how="):
        numakit.join(t, t, on="k", how="outer-space")
    with pytest.raises(numakit.BadInputError, match="not a table"):
        numakit.sort(42, "k")
    with pytest.raises(numakit.BadInputError, match="memory_limit="):
        numakit.sort(t, "k", memory_limit="lots")
    with pytest.raises(numakit.BadInputError):
        numakit.Pool(nodes=[999])
    with pytest.raises(numakit.BadInputError):
        numakit.Pool(threads=10_000)
    for cls in (numakit.BadInputError, numakit.MemoryLimitError, numakit.PlacementError):
        assert issubclass(cls, numakit.NumakitError)


def test_a_result_past_the_memory_limit_raises_memory_limit_error():
    n = 20_000
    t = pa.table({"k": np.zeros(n, dtype=np.int64), "v": np.arange(n)})
    # 20K x 20K = 400M result rows: far past 64 MiB, refused before allocating.
    with pytest.raises(numakit.MemoryLimitError, match="memory_limit=") as caught:
        numakit.join(t, t, on="k", memory_limit="64MiB")
    assert isinstance(caught.value, MemoryError)


def test_the_machine_tools_return_plain_data():
    topo = numakit.topology()
    assert topo["nodes"] and topo["cpus"]
    checks = numakit.doctor()["report"]
    assert checks["failed"] == 0, checks
    presets = numakit.presets()
    names = [p["name"] for p in presets]
    assert "nehalem-ex-4s" in names and all(p["nodes"] for p in presets)
    sim = numakit.simulate("nehalem-ex-4s", threads=8)
    assert sim["machine"] and sim["layout"]
    with pytest.raises(numakit.BadInputError):
        numakit.simulate("no-such-machine")
    with pytest.raises(numakit.BadInputError, match="spread evenly"):
        numakit.simulate("nehalem-ex-4s", threads=3)
    probe = numakit.probe(quick=True)
    assert probe["report"] and "placement_verified" in probe


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_table_shared_among_workers_is_sized_once_against_the_limit():
    import polars as pl

    n = 200_000
    left = pl.DataFrame({"k": np.arange(n), "text": ["x" * 100 + str(i) for i in range(n)]})
    right = pl.DataFrame({"k": np.arange(n)[::-1].copy(), "v": np.arange(n)})
    # The result needs about 30 MB; a table counted once per worker's part
    # (each a zero-copy slice of one buffer) looked many times larger.
    limit = resident_bytes() + 200 * 2**20
    result = numakit.join(left, right, on="k", memory_limit=limit, pool=numakit.Pool(threads=2))
    assert result.num_rows == n
