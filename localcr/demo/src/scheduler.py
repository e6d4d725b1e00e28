"""Choosing what runs next: due jobs first, then retries whose back-off has elapsed."""
from __future__ import annotations

import heapq
import random
import time
from dataclasses import dataclass, field


@dataclass(order=True)
class Pending:
    due: float
    job: str = field(compare=False)
    attempt: int = field(default=0, compare=False)


class Scheduler:
    """A heap of pending runs ordered by the time they are due."""

    def __init__(self, max_parallel: int = 4):
        self.max_parallel = max_parallel
        self.pending: list[Pending] = []
        self.running: set[str] = set()

    def submit(self, job: str, due: float, attempt: int = 0) -> None:
        heapq.heappush(self.pending, Pending(due, job, attempt))

    def next_runs(self, now: float | None = None) -> list[Pending]:
        """Every due run that fits under max_parallel, earliest first."""
        now = time.time() if now is None else now
        ready = []
        while self.pending and self.pending[0].due <= now and len(self.running) + len(ready) < self.max_parallel:
            ready.append(heapq.heappop(self.pending))
        return ready

    def failed(self, run: Pending, max_retries: int, base: float = 10, cap: float = 600) -> None:
        """Schedule a retry with exponential back-off and jitter, unless the retries are used up."""
        if run.attempt >= max_retries:
            return
        delay = min(cap, base * 2 ** run.attempt) * random.uniform(0.9, 1.1)
        self.submit(run.job, time.time() + delay, run.attempt + 1)
