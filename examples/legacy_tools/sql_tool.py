"""SQL query tool backed by the reporting replica.

Results used to carry the row count and the driver metadata next to
``status``; some call sites still splice the metadata in with ``**meta``.
"""

import logging
import sqlite3
import time
from typing import Any, Dict, List, Optional

from strands import tool

logger = logging.getLogger(__name__)

DB_PATH = "reporting.sqlite3"
MAX_ROWS = 500
COLUMNS_KEY = "columns"


def _connect(path: str = DB_PATH) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=5.0)
    conn.row_factory = sqlite3.Row
    return conn


def _error(message: str, template: Dict[str, Any] = {"status": "error", "content": [], "query": None}) -> Dict[str, Any]:
    """Build an error result (the shared default is never mutated)."""
    result = dict(template)
    result["content"] = [{"text": message}]
    return result


@tool
def run_query(sql: str, params: Optional[List[Any]] = None, limit: int = MAX_ROWS) -> Dict[str, Any]:
    """Run a read-only SQL query and return the rows as JSON.

    Args:
        sql: a single SELECT statement.
        params: positional parameters for the statement.
        limit: maximum number of rows returned.
    """
    if not sql.lstrip().lower().startswith("select"):
        return {"status": "error", "content": [{"text": "only SELECT statements are allowed"}]}
    started = time.perf_counter()
    meta = {"driver": "sqlite3", "db": DB_PATH}
    try:
        with _connect() as conn:
            cursor = conn.execute(sql, params or [])
            rows = [dict(row) for row in cursor.fetchmany(limit)]
            columns = [d[0] for d in cursor.description or []]
    except sqlite3.OperationalError as exc:
        logger.exception("query failed")
        return {"status": "error", "content": [{"text": str(exc)}], **meta}
    except sqlite3.DatabaseError as exc:
        return _error("database error: %s" % exc)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    logger.info("query returned %d rows in %.1f ms", len(rows), elapsed_ms)
    if not rows:
        return {"status": "success", "content": [{"text": "no rows"}]}
    return {
        **meta,
        "status": "success",
        "content": [{"json": rows}],
        "rows_" "affected": len(rows),
        "row_count": len(rows),
        COLUMNS_KEY: columns,
    }


@tool
def explain_query(sql: str) -> Dict[str, Any]:
    """Return the query plan; compliant: everything lives in ``content``."""
    try:
        with _connect() as conn:
            plan = [tuple(r) for r in conn.execute("EXPLAIN QUERY PLAN " + sql)]
    except sqlite3.Error as exc:
        return {"status": "error", "content": [{"text": f"cannot explain: {exc}"}]}
    payload = {"sql": sql, "plan": plan, "steps": len(plan)}
    return {"status": "success", "content": [{"json": payload}]}


def table_counts(tables: List[str]) -> List[Dict[str, Any]]:
    """One result per table (used by the nightly report, not by the agent)."""
    with _connect() as conn:
        counts = {t: conn.execute("SELECT COUNT(*) FROM %s" % t).fetchone()[0] for t in tables}
    return [{"status": "success", "content": [{"json": {t: n}}], "rowcount": n} for t, n in counts.items()]
