"""numakit's exceptions.

Every failure numakit reports is a ``NumakitError`` carrying numakit's
one-line message. The subclasses also derive from the Python exception a
caller would catch anyway:

- ``BadInputError`` (a ``ValueError``): a column that is missing or of a
  type that cannot play its role, a malformed request, a bad option;
- ``MemoryLimitError`` (a ``MemoryError``): the work would exceed the
  memory limit (``memory_limit=``), refused before allocating;
- ``PlacementError`` (an ``OSError``): threads or memory could not be
  placed as asked (``placement="strict"``).
"""


class NumakitError(Exception):
    """A failure numakit reports, with its one-line message."""


class BadInputError(NumakitError, ValueError):
    """The input or the request cannot be used as asked."""


class MemoryLimitError(NumakitError, MemoryError):
    """The work would need more memory than the limit allows."""


class PlacementError(NumakitError, OSError):
    """Threads or memory could not be placed as asked."""


__all__ = ["NumakitError", "BadInputError", "MemoryLimitError", "PlacementError"]
