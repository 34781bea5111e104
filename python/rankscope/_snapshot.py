"""Hang snapshots: every thread's Python stack, written to one text file per rank.

Written by the collector's background thread, which needs the GIL: a rank blocked in C inside a
collective (gloo / NCCL waits release the GIL) is covered; a thread spinning in C while holding
the GIL is not (then `py-spy dump --pid` is the tool). The format is documented in
docs/capture.md:

    rankscope-stacks 1
    pid: 1234
    rank: 3
    ...                                   (key: value header lines)
    order: most recent call last

    thread 140234 "MainThread" main
      File "/path/train.py", line 88, in train_step
        loss.backward()
      ...
    (a blank line between threads)
"""

import os
import sys
import threading
import time
import traceback

__all__ = ["format_stacks", "write_stacks"]


def format_stacks(header):
    frames = sys._current_frames()
    threads = {t.ident: t for t in threading.enumerate()}
    main_ident = threading.main_thread().ident
    lines = ["rankscope-stacks 1"]
    lines += [f"{k}: {v}" for k, v in header.items()]
    lines.append(f"threads: {len(frames)}")
    lines.append("order: most recent call last")
    # The main thread first: that is where a training loop hangs.
    for ident in sorted(frames, key=lambda i: (i != main_ident, i)):
        t = threads.get(ident)
        name = t.name if t else "?"
        role = "main" if ident == main_ident else ("daemon" if t is not None and t.daemon else "thread")
        lines.append("")
        lines.append(f'thread {ident} "{name}" {role}')
        for entry in traceback.extract_stack(frames[ident]):
            lines.append(f'  File "{entry.filename}", line {entry.lineno}, in {entry.name}')
            if entry.line:
                lines.append(f"    {entry.line.strip()}")
    return "\n".join(lines) + "\n"


def write_stacks(path, header):
    """Writes atomically: <path>.tmp, then rename."""
    text = format_stacks(dict(header, time_unix_ms=int(time.time() * 1000)))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return path
