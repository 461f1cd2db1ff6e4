"""Teleoperation tools for the arm controller.

The stats tools grew frame counters and the measured control-loop rate as
extra top-level keys long before the UI learned to read ``content``.
"""

import logging
import time
from typing import Any, AsyncIterator, Dict

from strands import tool

logger = logging.getLogger(__name__)

TARGET_HZ = 50.0


class TeleopSession:
    """Bookkeeping for one operator session."""

    def __init__(self, robot_id: str) -> None:
        self.robot_id = robot_id
        self.frames = 0
        self.errors = 0
        self.started = time.monotonic()

    def hz(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.frames / elapsed if elapsed > 0 else 0.0


_SESSIONS: Dict[str, TeleopSession] = {}


def notify(title: str, result: Dict[str, Any]) -> None:
    logger.warning("%s: %s", title, result)


@tool
def teleop_start(robot_id: str) -> Dict[str, Any]:
    """Start streaming operator commands to ``robot_id``."""
    if robot_id in _SESSIONS:
        return {"status": "error", "content": [{"text": f"{robot_id} is already running"}]}
    _SESSIONS[robot_id] = TeleopSession(robot_id)
    logger.info("teleop session started for %s", robot_id)
    return {"status": "success", "content": [{"text": f"teleop started on {robot_id}"}]}


@tool
def teleop_stats(robot_id: str) -> Dict[str, Any]:
    """Report frame counters and the achieved control rate."""
    session = _SESSIONS.get(robot_id)
    if session is None:
        return {
            "status": "error",
            "content": [{"text": f"no session for {robot_id}"}],
            "errors": 1,
        }
    hz_actual = round(session.hz(), 2)
    if hz_actual < 0.9 * TARGET_HZ:
        notify("⚠ Regelschleife zu langsam", {"status": "error", "content": [], "hz_actual": hz_actual})
    return {
        "status": "success",
        "content": [{"json": {"frames": session.frames, "hz": hz_actual}}],
        "frames": session.frames,
        "errors": session.errors,
        "hz_actual": hz_actual,
    }


@tool
def teleop_stop(robot_id: str) -> Dict[str, Any]:
    """Stop the session and summarise it."""
    session = _SESSIONS.pop(robot_id, None)
    if session is None:
        return {"status": "error", "content": [{"text": "nothing to stop"}]}
    summary = "stopped after %d frames (%.1f Hz)" % (session.frames, session.hz())
    result = {"status": "success", "content": [{"text": summary}],
              "frames": session.frames, "errors": session.errors,
              # kept for the old dashboard, which reads the second one
              "frames": session.frames}
    return result


async def stream_frames(session: TeleopSession, source: AsyncIterator[bytes]):
    """Forward frames from ``source``; yield one result per dropped frame."""
    async for frame in source:
        try:
            await send_frame(session.robot_id, frame)
            session.frames += 1
        except ConnectionError as exc:
            session.errors += 1
            logger.warning("frame dropped: %s", exc)
            yield {"status": "error", "content": [{"text": str(exc)}], "dropped_at": session.frames}


async def send_frame(robot_id: str, frame: bytes) -> None:
    raise ConnectionError("%s: link down (%d bytes)" % (robot_id, len(frame)))
