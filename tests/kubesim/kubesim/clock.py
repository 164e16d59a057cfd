"""Simulated time for kubesim.

Every part of the simulator (API server timestamps, controllers, kubelets, image pulls)
reads time from one Clock so that a single time scale factor speeds the whole cluster up:
with scale 10, one simulated minute passes in six real seconds. Simulated time starts at the
real wall-clock time when the Clock is built and then advances `scale` times faster.
"""

import datetime
import threading
import time


class Clock:
    def __init__(self, scale: float = 1.0):
        if scale <= 0:
            raise ValueError("time scale must be > 0")
        self.scale = float(scale)
        self._epoch = time.time()
        self._mono = time.monotonic()

    def now(self) -> float:
        """Simulated epoch seconds."""
        return self._epoch + (time.monotonic() - self._mono) * self.scale

    def rfc3339(self, t=None) -> str:
        """RFC 3339 UTC timestamp with second precision, as Kubernetes writes them."""
        if t is None:
            t = self.now()
        d = datetime.datetime.fromtimestamp(int(t), tz=datetime.timezone.utc)
        return d.strftime("%Y-%m-%dT%H:%M:%SZ")

    def real_seconds(self, sim_seconds: float) -> float:
        """How many real seconds `sim_seconds` of simulated time take."""
        return max(0.0, sim_seconds) / self.scale

    def sleep(self, sim_seconds: float):
        """Sleep for `sim_seconds` of simulated time."""
        time.sleep(self.real_seconds(sim_seconds))

    def wait(self, event: threading.Event, sim_seconds: float) -> bool:
        """Wait on `event` for at most `sim_seconds` of simulated time; True if it was set."""
        return event.wait(self.real_seconds(sim_seconds))


def parse_rfc3339(s: str) -> float:
    """Epoch seconds of a Kubernetes timestamp such as 2026-11-21T21:30:00Z."""
    s = s.replace("Z", "+00:00")
    return datetime.datetime.fromisoformat(s).timestamp()
