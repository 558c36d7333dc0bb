"""Type hints of numakit's Rust extension (use the ``numakit`` package:
its functions give these their keywords, defaults and docstrings)."""

from typing import Any, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

__version__: str

class Pool:
    """A NUMA-aware worker pool, made once and reused by any number of calls."""

    def __init__(
        self,
        threads: Optional[int] = None,
        nodes: Union[Sequence[int], str, None] = None,
        placement: str = "best-effort",
    ) -> None: ...
    @property
    def threads(self) -> int: ...
    @property
    def nodes(self) -> List[int]: ...
    @property
    def placement(self) -> str: ...

def join(
    pool: Pool,
    left: Any,
    right: Any,
    left_on: List[str],
    right_on: List[str],
    how: str,
    algorithm: str,
    left_columns: Optional[List[str]],
    right_columns: Optional[List[str]],
    suffix: str,
    memory_limit: Union[int, str, None],
    progress: bool,
) -> Tuple[pa.Table, str]: ...
def aggregate(
    pool: Pool,
    table: Any,
    by: List[str],
    aggs: List[Tuple[str, Optional[str]]],
    method: str,
    memory_limit: Union[int, str, None],
    progress: bool,
) -> Tuple[pa.Table, str]: ...
def sort(
    pool: Pool,
    table: Any,
    by: List[Tuple[str, bool, bool]],
    columns: Optional[List[str]],
    memory_limit: Union[int, str, None],
    progress: bool,
) -> Tuple[pa.Table, str]: ...
def topology() -> str: ...
def doctor() -> str: ...
def probe(quick: bool, placement: str, memory_limit: Optional[int], progress: bool) -> str: ...
def simulate(machine: Optional[str], threads: Optional[int]) -> str: ...
def presets() -> str: ...
def buffer_addresses(obj: Any) -> List[int]: ...
