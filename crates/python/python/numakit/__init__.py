"""numakit: NUMA-aware joins, group-bys and sorts on Arrow tables.

Tables go in without copies through the Arrow PyCapsule interface
(``__arrow_c_stream__``): pyarrow Tables and RecordBatchReaders, Polars
DataFrames, DuckDB results (``relation.arrow()``, or the relation itself),
and pandas DataFrames (through pyarrow). Results come back as
``pyarrow.Table``: ``result.to_pandas()``, ``polars.from_arrow(result)``.

The operators run on numakit's worker pool with the interpreter released;
Ctrl-C stops a long call at its next phase and raises KeyboardInterrupt.
Failures raise ``numakit.errors.NumakitError`` subclasses with one-line
messages.

    >>> import numakit, pyarrow as pa
    >>> left = pa.table({"k": [1, 2, 3], "a": ["x", "y", "z"]})
    >>> right = pa.table({"k": [3, 1, 1, 9], "b": [0.5, 1.5, 2.5, 3.5]})
    >>> numakit.join(left, right, on="k").num_rows
    3

The machine tools return plain data (the CLI's ``--json`` content):
``topology()``, ``doctor()``, ``probe()``, ``simulate()``, ``presets()``.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import _numakit
from ._numakit import Pool
from .errors import BadInputError, MemoryLimitError, NumakitError, PlacementError

__version__: str = _numakit.__version__

__all__ = [
    "Pool",
    "join",
    "aggregate",
    "group_by",
    "GroupBy",
    "sort",
    "topology",
    "doctor",
    "probe",
    "simulate",
    "presets",
    "NumakitError",
    "BadInputError",
    "MemoryLimitError",
    "PlacementError",
]

Columns = Union[str, Sequence[str]]
MemoryLimit = Union[int, str, None]

_pools: Dict[Optional[int], Pool] = {}
_pools_lock = threading.Lock()


def _pool(pool: Optional[Pool], threads: Optional[int]) -> Pool:
    """The pool to run on: the one given, else a shared one per thread
    count, made on first use and kept (so later calls start no threads)."""
    if pool is not None:
        if threads is not None and threads != pool.threads:
            raise BadInputError(
                f"threads={threads} contradicts the pool given ({pool.threads} threads); pass one of them"
            )
        return pool
    with _pools_lock:
        if threads not in _pools:
            _pools[threads] = Pool(threads=threads)
        return _pools[threads]


def _arrow(obj: Any, what: str) -> Any:
    """An object numakit can read through ``__arrow_c_stream__``."""
    if hasattr(obj, "__arrow_c_stream__"):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    module = type(obj).__module__ or ""
    if module.startswith("pandas"):
        return pa.Table.from_pandas(obj, preserve_index=False)
    if module.startswith("duckdb") and hasattr(obj, "arrow"):
        return obj.arrow()
    if isinstance(obj, Mapping):
        return pa.table(obj)
    raise BadInputError(
        f"{what} is a {type(obj).__name__}, not a table: pass a pyarrow Table or "
        "RecordBatchReader, a Polars or pandas DataFrame, or a DuckDB relation"
    )


def _names(columns: Optional[Columns], what: str) -> Optional[List[str]]:
    if columns is None:
        return None
    if isinstance(columns, str):
        return [columns]
    names = list(columns)
    if not all(isinstance(c, str) for c in names):
        raise BadInputError(f"{what} must be a column name or a list of names")
    return names


def _finish(outcome: Tuple[pa.Table, str], report: bool):
    table, text = outcome
    if report:
        return table, json.loads(text)
    return table


def join(
    left: Any,
    right: Any,
    on: Optional[Columns] = None,
    *,
    left_on: Optional[Columns] = None,
    right_on: Optional[Columns] = None,
    how: str = "inner",
    algorithm: str = "auto",
    left_columns: Optional[Columns] = None,
    right_columns: Optional[Columns] = None,
    suffix: str = "_right",
    threads: Optional[int] = None,
    pool: Optional[Pool] = None,
    memory_limit: MemoryLimit = None,
    report: bool = False,
    progress: bool = False,
):
    """Join two tables on equal keys, with SQL's semantics.

    left, right: tables (pyarrow, Polars, pandas, DuckDB); ``left`` is the
        build side. Keys of any common type: integers of every width and
        sign (compared by value), strings, binary, booleans, dates,
        timestamps, decimals, and several columns at once.
    on: key column(s) named alike on both sides; or ``left_on`` and
        ``right_on``, pairwise.
    how: ``"inner"``; ``"left"`` (every left row, with nulls in the right
        table's columns where nothing matches); ``"semi"`` (the left rows
        that match, once each); ``"anti"`` (the left rows that do not). A
        null key never matches.
    algorithm: ``"auto"`` (numakit chooses and says why in the report),
        ``"npo"``, ``"pro"``, ``"cprl"`` or ``"mpsm"``.
    left_columns, right_columns: the columns to carry (default: all; the
        key once, under its left name). A right column whose name is taken
        gets ``suffix``.
    threads, pool: the workers (default: one per CPU, a pool kept for
        later calls).
    memory_limit: bytes, or a size or percentage such as ``"8GiB"`` or
        ``"75%"`` (default: 80% of the memory available to the process).
        Past it the call raises MemoryLimitError before allocating.
    report: also return the operator's report (algorithm and why, key
        coding, rows, phase times) as a dict: ``(table, report)``.
    progress: print each phase on stderr as it starts.

    Returns a ``pyarrow.Table``.
    """
    if on is not None and (left_on is not None or right_on is not None):
        raise BadInputError("pass on= or left_on=/right_on=, not both")
    lkeys = _names(on if on is not None else left_on, "left_on")
    rkeys = _names(on if on is not None else right_on, "right_on")
    if not lkeys or not rkeys:
        raise BadInputError("name the key columns: on= or left_on= and right_on=")
    p = _pool(pool, threads)
    outcome = _numakit.join(
        p,
        _arrow(left, "left"),
        _arrow(right, "right"),
        lkeys,
        rkeys,
        how,
        algorithm,
        _names(left_columns, "left_columns"),
        _names(right_columns, "right_columns"),
        suffix,
        memory_limit,
        progress,
    )
    return _finish(outcome, report)


_FUNCS = ("count", "sum", "min", "max", "avg", "mean")


def _aggregates(aggs: Any) -> List[Tuple[str, Optional[str]]]:
    """``(function, column)`` pairs from the accepted forms."""
    if aggs is None:
        return [("count", None)]
    if isinstance(aggs, str):
        aggs = [aggs]
    out: List[Tuple[str, Optional[str]]] = []
    if isinstance(aggs, Mapping):
        for column, funcs in aggs.items():
            for func in [funcs] if isinstance(funcs, str) else list(funcs):
                if column == "*":
                    if func != "count":
                        raise BadInputError(f'"*" takes only "count", not {func!r}')
                    out.append(("count", None))
                else:
                    out.append((func, column))
        return out
    for item in aggs:
        if isinstance(item, tuple) and len(item) == 2:
            out.append((item[0], item[1]))
        elif isinstance(item, str) and item in ("count", "count(*)"):
            out.append(("count", None))
        elif isinstance(item, str) and ":" in item:
            func, column = item.split(":", 1)
            out.append((func.strip(), column.strip()))
        else:
            raise BadInputError(
                f"aggregate {item!r} is not 'count', 'FUNC:COLUMN' or (FUNC, COLUMN), "
                "FUNC one of count, sum, min, max, avg"
            )
    return out


def aggregate(
    table: Any,
    by: Columns,
    aggs: Any = None,
    *,
    method: str = "auto",
    threads: Optional[int] = None,
    pool: Optional[Pool] = None,
    memory_limit: MemoryLimit = None,
    report: bool = False,
    progress: bool = False,
):
    """Group ``table`` by the ``by`` columns and compute aggregates, with
    SQL's semantics: null keys form one group, aggregates skip nulls,
    SUM of integers is exact (an error on overflow), decimals keep their
    scale, AVG is a float, MIN and MAX work on strings and dates too.

    aggs: which aggregates, in the result's order after the keys:
        - a dict ``{column: "sum"}`` or ``{column: ["sum", "avg"]}``, with
          ``{"*": "count"}`` for COUNT(*);
        - a list of ``"count"`` (rows) and ``"FUNC:COLUMN"`` (the CLI's
          ``--agg``), or of ``(FUNC, COLUMN)`` pairs;
        FUNC one of count, sum, min, max, avg. Default: ``["count"]``.
        Result columns: the keys under their names, then ``count`` and
        ``FUNC_COLUMN`` (``sum_price``).
    method: ``"auto"`` or one of numakit's aggregation methods
        (``local``, ``partitioned``, ``shuffle``, ``naive-shuffle``,
        ``migration``, ``migration-copy``; one integer value column only).
    threads, pool, memory_limit, report, progress: as for :func:`join`.

    Returns a ``pyarrow.Table`` (groups in no particular order).
    """
    keys = _names(by, "by")
    if not keys:
        raise BadInputError("by= names no key column")
    p = _pool(pool, threads)
    outcome = _numakit.aggregate(
        p, _arrow(table, "table"), keys, _aggregates(aggs), method, memory_limit, progress
    )
    return _finish(outcome, report)


class GroupBy:
    """``numakit.group_by(table, by).agg(...)``: :func:`aggregate` in
    Polars' style."""

    def __init__(self, table: Any, by: Columns, **options: Any) -> None:
        self._table = table
        self._by = by
        self._options = options

    def agg(self, aggs: Any = None, **named: Union[str, Sequence[str]]):
        """The aggregates as in :func:`aggregate`; keywords add more:
        ``agg(price="sum", qty=["min", "max"])``."""
        combined = _aggregates(aggs) if aggs is not None else []
        combined += _aggregates(dict(named)) if named else []
        if not combined:
            combined = [("count", None)]
        return aggregate(self._table, self._by, combined, **self._options)

    def count(self):
        """COUNT(*) per group."""
        return self.agg(["count"])


def group_by(table: Any, by: Columns, **options: Any) -> GroupBy:
    """A group-by to finish with ``.agg(...)``; ``options`` are
    :func:`aggregate`'s keywords (threads, pool, memory_limit, ...)."""
    return GroupBy(table, by, **options)


def _per_column(value: Union[bool, Sequence[bool]], count: int, what: str) -> List[bool]:
    if isinstance(value, bool):
        return [value] * count
    values = list(value)
    if len(values) != count:
        raise BadInputError(f"{what} has {len(values)} values for {count} sort columns")
    return [bool(v) for v in values]


def sort(
    table: Any,
    by: Columns,
    *,
    descending: Union[bool, Sequence[bool]] = False,
    nulls_last: Union[bool, Sequence[bool]] = True,
    columns: Optional[Columns] = None,
    threads: Optional[int] = None,
    pool: Optional[Pool] = None,
    memory_limit: MemoryLimit = None,
    report: bool = False,
    progress: bool = False,
):
    """Sort ``table`` by the ``by`` columns, most significant first.

    Strings order by bytes; signed, unsigned, float (NaN last in ascending
    order, a total order) and decimal values by value. An input already in
    order (or in reverse order) is detected and not sorted again.

    descending, nulls_last: one flag for every column, or one per column.
    columns: the columns of the result (default: all, in table order).
    threads, pool, memory_limit, report, progress: as for :func:`join`.

    Returns a ``pyarrow.Table``.
    """
    keys = _names(by, "by")
    if not keys:
        raise BadInputError("by= names no sort column")
    desc = _per_column(descending, len(keys), "descending")
    last = _per_column(nulls_last, len(keys), "nulls_last")
    spec = [(k, d, not n) for k, d, n in zip(keys, desc, last)]
    p = _pool(pool, threads)
    outcome = _numakit.sort(
        p, _arrow(table, "table"), spec, _names(columns, "columns"), memory_limit, progress
    )
    return _finish(outcome, report)


def topology() -> Dict[str, Any]:
    """This machine's NUMA nodes, CPUs, caches and distances, as
    ``numakit topo --json`` gives them."""
    return json.loads(_numakit.topology())


def doctor() -> Dict[str, Any]:
    """Placement and pool checks verified by observation, as ``numakit
    doctor --json``: ``{"topology": ..., "report": {"checks": [...], ...}}``."""
    return json.loads(_numakit.doctor())


def probe(
    quick: bool = True,
    *,
    placement: str = "best-effort",
    memory_limit: Optional[int] = None,
    progress: bool = False,
) -> Dict[str, Any]:
    """Latency and bandwidth between every pair of nodes, as ``numakit
    probe --json`` (``quick=False``: the full sizes; seconds to minutes)."""
    return json.loads(_numakit.probe(quick, placement, memory_limit, progress))


def simulate(machine: Optional[str] = None, threads: Optional[int] = None) -> Dict[str, Any]:
    """The interconnect simulator's predictions for every shuffle schedule
    and its thread sweep, as ``numakit simulate --json``.

    machine: a preset name (see :func:`presets`), a described machine's
        JSON file, or None for this machine.
    threads: threads in all, spread evenly over the sockets (default: every
        hardware thread).
    """
    return json.loads(_numakit.simulate(machine, threads))


def presets() -> List[Dict[str, Any]]:
    """The described machines numakit knows (name, description, source,
    nodes, links...), for :func:`simulate`."""
    return json.loads(_numakit.presets())
