"""The auto-trigger: decides, step by step, when the job has degraded enough to be worth a
trace. Pure Python without torch, so that it is cheap and tested on its own.

Fires when
  * the step time stays above `factor` x its rolling baseline (and at least `min_excess_s`
    above it, so that sub-millisecond jitter of tiny steps does not count) for `consecutive`
    steps in a row
    (the baseline is the median of the last `window` normal steps, so one slow step — a GC
    pause, a checkpoint — neither fires nor inflates it), or
  * a single gap between two steps exceeds `gap_s` (28 minutes by default: the job stalled).
After firing it stays quiet for `cooldown_s` and relearns its baseline, so a lasting slowdown
is traced once, not in a loop.
"""

import time

__all__ = ["AutoTrigger"]


class AutoTrigger:
    __slots__ = ("factor", "consecutive", "window", "warmup", "gap_s", "cooldown_s", "_clock",
                 "_seen", "_ring", "_ring_pos", "_baseline", "_since_median", "_slow_run",
                 "_slow_sum", "_quiet_until", "fired", "min_excess_s")

    def __init__(self, factor=1.2, consecutive=5, window=50, warmup=10, gap_s=28 * 60.0,
                 cooldown_s=600.0, min_excess_s=0.005, clock=time.monotonic):
        if factor <= 1.0 or consecutive < 1 or window < 4:
            raise ValueError("factor must be > 1, consecutive >= 1, window >= 4")
        self.factor = factor
        self.consecutive = consecutive
        self.window = window
        self.warmup = warmup
        self.gap_s = gap_s
        self.cooldown_s = cooldown_s
        self.min_excess_s = min_excess_s
        self._clock = clock
        self.fired = 0
        self._quiet_until = 0.0
        self._reset()

    def _reset(self):
        self._seen = 0
        self._ring = []
        self._ring_pos = 0
        self._baseline = 0.0
        self._since_median = 0
        self._slow_run = 0
        self._slow_sum = 0.0

    @property
    def baseline(self):
        """Seconds per step the trigger considers normal (0 while it is still learning)."""
        return self._baseline

    def observe(self, dt):
        """Feeds one step time (seconds). Returns a reason string when the trigger fires."""
        self._seen += 1
        if dt > self.gap_s:
            return self._fire(f"a gap of {dt / 60:.1f} min between two steps (threshold {self.gap_s / 60:.0f} min)")
        if self._seen <= self.warmup:
            return None
        base = self._baseline
        if base and dt > self.factor * base and dt - base > self.min_excess_s:
            self._slow_run += 1
            self._slow_sum += dt
            if self._slow_run >= self.consecutive:
                mean = self._slow_sum / self._slow_run
                return self._fire(f"step time {mean * 1e3:.1f} ms is {mean / base:.2f}x its baseline of "
                                  f"{base * 1e3:.1f} ms for {self._slow_run} steps in a row")
            return None
        self._slow_run = 0
        self._slow_sum = 0.0
        self._add_normal(dt)
        return None

    def _add_normal(self, dt):
        ring = self._ring
        if len(ring) < self.window:
            ring.append(dt)
        else:
            ring[self._ring_pos] = dt
            self._ring_pos = (self._ring_pos + 1) % self.window
        self._since_median += 1
        # The median is recomputed every 16 normal steps (and while the ring fills): sorting 50
        # floats costs a few microseconds, too much for every step.
        if self._since_median >= 16 or len(ring) < self.window:
            self._since_median = 0
            if len(ring) >= 4:
                s = sorted(ring)
                self._baseline = s[len(s) // 2]

    def _fire(self, reason):
        now = self._clock()
        self._reset()
        if now < self._quiet_until:
            return None
        self._quiet_until = now + self.cooldown_s
        self.fired += 1
        return reason
