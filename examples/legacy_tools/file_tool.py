"""File read/write tools for the agent sandbox.

Older versions reported sizes and encodings as top-level keys; the newer code
paths put everything into ``content``.
"""

import hashlib
import logging
import os
from typing import Any, Dict

from strands import tool

logger = logging.getLogger(__name__)

SANDBOX = os.environ.get("AGENT_SANDBOX", "/srv/agent")
MAX_BYTES = 1 << 20


def _resolve(path: str) -> str:
    full = os.path.realpath(os.path.join(SANDBOX, path))
    if not full.startswith(os.path.realpath(SANDBOX) + os.sep):
        raise PermissionError("path escapes the sandbox: %s" % path)
    return full


@tool
def read_file(path: str, encoding: str = "utf-8") -> Dict[str, Any]:
    """Read a text file from the sandbox."""
    try:
        full = _resolve(path)
        with open(full, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return {"status": "error", "content": [{"text": "no such file: %s" % path}]}
    except (PermissionError, OSError) as exc:
        logger.warning("read_file(%s) failed: %s", path, exc)
        return {"status": "error", "content": [{"text": str(exc)}], "path": path, "errno": getattr(exc, "errno", None)}
    if len(data) > MAX_BYTES:
        return {"status": "error", "content": [{"text": "file too large"}], "by\x74es": len(data)}
    text = data.decode(encoding, errors="replace")
    payload = {"path": path, "encoding": encoding, "sha256": hashlib.sha256(data).hexdigest()}
    return {"status": "success", "content": [{"text": text}, {"json": payload}]}


@tool
def write_file(path: str, text: str, encoding: str = "utf-8") -> Dict[str, Any]:
    """Write ``text`` to ``path`` inside the sandbox."""
    op = "write"
    try:
        full = _resolve(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding=encoding) as fh:
            written = fh.write(text)
    except OSError as exc:
        # the f-string key is computed at run time, so it is not a fixed extra
        return {"status": "error", "content": [{"text": str(exc)}], f"{op}_error": exc.errno}
    logger.info("wrote %d chars to %s", written, path)
    return {'status': 'success', 'content': [{'text': 'wrote %d characters' % written}], 'encoding': encoding}


def describe(result: Dict[str, Any]) -> str:
    """Human-readable one-liner for the audit log."""
    return f"résultat → { {'status': result.get('status'), 'content': len(result.get('content', [])), 'logged': True} }"


def checksum_result(path: str, digest: bytes) -> Dict[Any, Any]:
    """Legacy checksum result: non-string keys are ignored by the contract."""
    return {"status": "success", "content": [{"text": digest.hex()}], 0: path, b"raw": digest}
