"""The auto-trigger: decides, step by step, when the job has degraded enough to be worth a
trace. Pure Python without torch, so that it is cheap and tested on its own.

A healthy job's step time is noisy: the first steps compile, autotune and fill caches; later
ones jitter with the GPU clock, the garbage collector, other processes on the machine, and
bursts of a few slow steps (a checkpoint, a log flush, an evaluation batch). On the 2-core
machine the tests run on, a healthy CPU job's steps spread by 20 % around their median. A trace
costs the job seconds, so the trigger fires only on what a person would call a slowdown: the
typical step became slower, and stayed so.

  * Warm-up is ignored: the first `warmup` steps are not looked at.
  * The last `consecutive` steps are the recent window; the `window` steps before them are the
    baseline. Nothing fires until the baseline holds `min_samples` steps.
  * The baseline is robust: its median, and its spread (1.4826 x the median absolute
    deviation: the standard deviation of a normal distribution, which no outlier inflates).
  * The trigger fires when the median of the recent window exceeds the baseline median by
    more than all of: (`factor` - 1) x the baseline, `min_excess_s` (sub-millisecond jitter of
    tiny steps never counts), and `k` standard errors of a median of that many steps
    (k x 1.2533 x spread / sqrt(consecutive)): on a noisy job a shift must stand out from the
    noise. A median needs more than half of the window slow: a burst of slow steps shorter
    than half the window never fires, however slow, and one slow step never moves a median.
  * The degradation must last: the recent median stays above that threshold for `sustain_s`
    seconds of steps (20 s by default; it ends only once the median has stayed below half-way
    between baseline and threshold for a whole window), and meanwhile the baseline is frozen, so that a lasting slowdown
    is not learned as normal before it fires. Healthy jobs drift: 1-rank GPU jobs of 7 ms steps
    were seen 20-40 % slower for several seconds with no fault at all; a trace costs seconds,
    and a slowdown worth one lasts longer than that.
  * A single gap between two steps longer than `gap_s` (28 minutes by default: the job
    stalled) fires at once.
After firing the trigger stays quiet for `cooldown_s` and relearns from scratch, warm-up
included (the trace itself slows the steps it records).

Measured: bench/trigger_bench.py replays recorded runs (tests/data/trigger; test_trigger.py
pins the results) — see docs/capture.md, "Auto-trigger", for the numbers.

Cost per step: a few comparisons; the exact median of the recent window is computed only when
more than half of it is above the cut or while a degradation lasts, and the baseline every 16
steps (bench/step_overhead.py).
"""

import math
import time

__all__ = ["AutoTrigger"]

MAD_TO_SIGMA = 1.4826
MEDIAN_SE = 1.2533  # standard error of a median = 1.2533 sigma / sqrt(n) (normal data)


class AutoTrigger:
    __slots__ = ("factor", "consecutive", "window", "warmup", "min_samples", "k", "sustain_s", "gap_s", "cooldown_s",
                 "min_excess_s", "_clock", "_seen", "_recent", "_recent_pos", "_recent_len", "_above",
                 "_ring", "_ring_pos", "_since_stats", "_baseline", "_spread", "_cut", "_held_s", "_below",
                 "_quiet_until", "fired")

    def __init__(self, factor=1.15, consecutive=30, window=100, warmup=30, min_samples=30, k=3.0, sustain_s=20.0,
                 gap_s=28 * 60.0, cooldown_s=600.0, min_excess_s=0.001, clock=time.monotonic):
        if factor <= 1.0 or consecutive < 1 or window < 4 or min_samples < 4 or min_samples > window or k < 0:
            raise ValueError("factor must be > 1, consecutive >= 1, 4 <= min_samples <= window, k >= 0")
        self.factor = factor
        self.consecutive = consecutive
        self.window = window
        self.warmup = warmup
        self.min_samples = min_samples
        self.k = k
        self.sustain_s = sustain_s
        self.gap_s = gap_s
        self.cooldown_s = cooldown_s
        self.min_excess_s = min_excess_s
        self._clock = clock
        self.fired = 0
        self._quiet_until = 0.0
        self._reset()

    def _reset(self):
        self._seen = 0
        self._recent = [0.0] * self.consecutive  # ring of the last `consecutive` steps
        self._recent_pos = 0
        self._recent_len = 0
        self._above = 0  # recent steps above the cut
        self._ring = []  # the baseline: steps that left the recent window
        self._ring_pos = 0
        self._since_stats = 0
        self._baseline = 0.0
        self._spread = 0.0
        self._cut = math.inf  # a recent step above this counts towards a shifted median
        self._held_s = 0.0  # how long (step time) the recent median has been above the threshold
        self._below = 0  # steps in a row, during a degradation, with the median back near the baseline

    @property
    def baseline(self):
        """Seconds per step the trigger considers normal (0 while it is still learning)."""
        return self._baseline if len(self._ring) >= self.min_samples else 0.0

    @property
    def threshold(self):
        """A recent median above this (seconds) fires (inf while the trigger is still learning)."""
        if len(self._ring) < self.min_samples:
            return math.inf
        return self._baseline + max((self.factor - 1.0) * self._baseline, self.min_excess_s,
                                    self.k * MEDIAN_SE * self._spread / math.sqrt(self.consecutive))

    def observe(self, dt):
        """Feeds one step time (seconds). Returns a reason string when the trigger fires."""
        self._seen += 1
        if dt > self.gap_s:
            return self._fire(f"a gap of {dt / 60:.1f} min between two steps (threshold {self.gap_s / 60:.0f} min)")
        if self._seen <= self.warmup:
            return None
        self._push(dt)
        degraded = self._held_s > 0.0
        if not degraded and (2 * self._above <= self._recent_len or self._recent_len < self.consecutive):
            return None
        recent = sorted(self._recent)
        median = recent[len(recent) // 2]
        threshold, base = self.threshold, self._baseline
        # Hysteresis: a degradation begins above the threshold and ends only once the median has
        # stayed below half-way between baseline and threshold for a whole window, so noise
        # around the threshold neither ends a real one nor restarts its clock.
        if not degraded and median <= threshold:
            return None
        if degraded and median <= base + (threshold - base) / 2:
            self._below += 1
            if self._below >= self.consecutive:
                self._held_s = 0.0
                self._below = 0
            return None
        self._below = 0
        self._held_s += dt
        if self._held_s < self.sustain_s or median <= threshold:
            return None
        return self._fire(f"the median step time of the last {self.consecutive} steps, {median * 1e3:.1f} ms, is "
                          f"{median / base:.2f}x its baseline of {base * 1e3:.1f} ms, for {self._held_s:.0f} s")

    def _push(self, dt):
        pos = self._recent_pos
        if self._recent_len == self.consecutive:
            old = self._recent[pos]
            if old > self._cut:
                self._above -= 1
            if self._held_s == 0.0:  # while degraded, the baseline stays what it was
                self._add_baseline(old)
        else:
            self._recent_len += 1
        self._recent[pos] = dt
        self._recent_pos = (pos + 1) % self.consecutive
        if dt > self._cut:
            self._above += 1

    def _add_baseline(self, dt):
        ring = self._ring
        if len(ring) < self.window:
            ring.append(dt)
        else:
            ring[self._ring_pos] = dt
            self._ring_pos = (self._ring_pos + 1) % self.window
        self._since_stats += 1
        # Median and MAD are recomputed every 16 steps (and while the ring fills): sorting 100
        # floats costs several microseconds, too much for every step.
        if self._since_stats >= 16 or len(ring) <= self.min_samples:
            self._since_stats = 0
            if len(ring) >= self.min_samples:
                s = sorted(ring)
                median = s[len(s) // 2]
                dev = sorted(abs(x - median) for x in s)
                self._baseline = median
                self._spread = MAD_TO_SIGMA * dev[len(dev) // 2]
                self._cut = self.threshold
                self._above = sum(1 for x in self._recent[:self._recent_len] if x > self._cut)

    def _fire(self, reason):
        now = self._clock()
        self._reset()
        if now < self._quiet_until:
            return None
        self._quiet_until = now + self.cooldown_s
        self.fired += 1
        return reason
