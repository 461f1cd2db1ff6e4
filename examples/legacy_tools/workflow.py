"""Workflow runner: executes named steps and reports per-step results.

Each step result is itself a tool result; the runner nests them in the
``content`` of its own result.  Metrics used to be spliced in at the top level.
"""

import logging
import time
from typing import Any, Callable, Dict, List

from strands import tool

logger = logging.getLogger(__name__)

Step = Callable[[Dict[str, Any]], Any]

on_error = lambda name, exc: {"status": "error", "content": [{"text": "%s: %s" % (name, exc)}], "step": name}


class StepResult:
    """Canonical results shared by the runner."""

    SKIPPED = {"status": "success", "content": [{"text": "skipped"}]}
    CANCELLED = {"status": "error", "content": [{"text": "cancelled"}], "retryable": False}


def _metrics(started: float, steps: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {
        "duration_ms": round((time.monotonic() - started) * 1000.0, 1),
        "steps_total": len(steps),
        "steps_failed": sum(1 for s in steps if s.get("status") == "error"),
    }


def _run_step(name: str, func: Step, state: Dict[str, Any]) -> Dict[str, Any]:
    started = time.monotonic()
    try:
        output = func(state)
    except Exception as exc:  # noqa: BLE001 - every step failure is reported
        logger.exception("step %s failed", name)
        return on_error(name, exc)
    return {
        "status": "success",
        "content": [{"json": output}],
        "dur\x61tion_ms": round((time.monotonic() - started) * 1000.0, 1),
    }


@tool
def run_workflow(steps: Dict[str, Step], stop_on_error: bool = True) -> Dict[str, Any]:
    """Run ``steps`` in order and return one nested result per step."""
    started = time.monotonic()
    state: Dict[str, Any] = {}
    results = []
    for name, func in steps.items():
        result = _run_step(name, func, state)
        results.append(result)
        if result["status"] == "error" and stop_on_error:
            break
    metrics = _metrics(started, results)
    if metrics["steps_failed"]:
        return {
            **metrics,
            "status": "error",
            "content": [{"json": {"steps": results}}],
        }
    return {
        "status": "success",
        **metrics,
        "content": [
            {"text": "%d steps completed" % len(results)},
            {"json": {"status": "success", "content": [{"json": r} for r in results], "workflow": "default"}},
        ],
        "workflow": "default",
    }


@tool
def dry_run(steps: Dict[str, Step]) -> Dict[str, Any]:
    """List the steps without running them (compliant)."""
    planned = [{"status": "success", "content": [{"text": name}]} for name in steps]
    return {"status": "success", "content": [{"json": planned}], "toolUseId": "dry-run"}


def retry_result(result: Dict[str, Any], attempt: int, extra: Dict[str, Any]) -> Dict[str, Any]:
    """Legacy helper that re-wraps a result with retry bookkeeping."""
    return {"status": result["status"], **extra, "content": result["content"], "attempt": attempt, **result}
