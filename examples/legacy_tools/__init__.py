"""Legacy Strands tools, written before the tool-result contract was enforced.

Several tools here still return extra top-level keys or splice whole metadata
dicts into their results; ``toolshape check examples/`` lists them.
"""

from .compliant import echo, ping, word_count
from .file_tool import read_file, write_file
from .sql_tool import run_query
from .teleop import teleop_start, teleop_stats, teleop_stop
from .workflow import run_workflow

__all__ = [
    "echo",
    "ping",
    "read_file",
    "run_query",
    "run_workflow",
    "teleop_start",
    "teleop_stats",
    "teleop_stop",
    "word_count",
    "write_file",
]
