"""Tools that already follow the result contract.

Only ``status``, ``content`` and ``toolUseId`` appear at the top level; any
metadata travels inside a ``{"json": ...}`` content block.
"""

import logging
import platform
from typing import Any, Dict, Optional

from strands import tool

logger = logging.getLogger(__name__)

SUCCESS = "success"


@tool
def ping(tool_use_id: Optional[str] = None) -> Dict[str, Any]:
    """Health check."""
    result = {"status": SUCCESS, "content": [{"text": "pong"}]}
    if tool_use_id:
        result = {"toolUseId": tool_use_id, "status": SUCCESS, "content": [{"text": "pong"}]}
    return result


@tool
def echo(text: str, tool_use_id: str = "") -> Dict[str, Any]:
    """Echo the input back, with host details in a JSON block."""
    payload = {"text": text, "length": len(text), "host": platform.node()}
    return {
        "toolUseId": tool_use_id,
        "status": "success",
        "content": [
            {"text": text},
            {"json": payload},
        ],
    }


@tool
def word_count(text: str) -> Dict[str, Any]:
    """Count words; the counts go into content, not next to it."""
    words = text.split()
    if not words:
        return {"status": "error", "content": [{"text": "empty input"}]}
    counts = {w: words.count(w) for w in set(words)}
    stats = {"status": "computed", "words": len(words)}  # no "content": not a result
    fields = {"status", "content", "words"}  # a set display, not a dict
    logger.debug("fields %s, stats %s", fields, stats)
    return {"status": "success", "content": [{"json": {"total": len(words), "counts": counts}}]}


def wrap(status: str, blocks: list) -> Dict[str, Any]:
    """Build a result from parts; ``dict(...)`` calls are not dict displays."""
    return dict(status=status, content=blocks, extra=None)
