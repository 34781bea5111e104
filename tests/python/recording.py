"""Records a real PyTorch job for a test, surviving PyTorch's own rare crashes.

torch.profiler with `with_stack`/`profile_memory` very occasionally kills a rank with SIGSEGV inside
PyTorch (CI saw one in ~20 recordings; no rankscope code runs in those processes). Such a run says
nothing about rankscope, so it is recorded again, at most twice. Any other failure (a Python
error in a workload, a timeout, a rendezvous that fails) is raised at once, with the job's own
output in the message rather than a truncated byte string.
"""

import os
import re
import shutil
import subprocess

# What torchrun prints when a rank died of a signal, and the exit status of a process that did.
_KILLED_BY_SIGNAL = re.compile(r"Signal \d+ \(SIG\w+\) received by PID|exitcode\s*:\s*-\d+")
_ATTEMPTS = 3


class RecordingFailed(AssertionError):
    pass


def died_of_signal(proc):
    return proc.returncode < 0 or bool(_KILLED_BY_SIGNAL.search(proc.stderr + proc.stdout))


def record(cmd, env, timeout, clean=()):
    """Runs `cmd` (a workload or torchrun) to completion. `clean` lists the output folders a
    crashed attempt may have left half written; they are removed before the next attempt.
    faulthandler prints a crashed process's Python stack into its output."""
    env = dict(os.environ if env is None else env, PYTHONFAULTHANDLER="1")
    for attempt in range(1, _ATTEMPTS + 1):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        if proc.returncode == 0:
            return proc
        if not died_of_signal(proc) or attempt == _ATTEMPTS:
            break
        print(f"recording attempt {attempt} lost a process to a signal inside PyTorch; recording again")
        for path in clean:
            shutil.rmtree(path, ignore_errors=True)
    raise RecordingFailed(f"{' '.join(map(str, cmd))}\nexited {proc.returncode} after {attempt} attempt(s)\n"
                          f"--- stdout (tail)\n{proc.stdout[-3000:]}\n--- stderr (tail)\n{proc.stderr[-6000:]}")
