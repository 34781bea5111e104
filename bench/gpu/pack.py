"""Packs capture results into at most N tar files of at most MB each, most important first
(the device tool brings back 8 files of 16 MiB, 64 MiB in all).

    python3 bench/gpu/pack.py OUT WORK --parts 6 --part-mb 15 --total-mb 60 [--first NAME ...]

Every sub-directory of WORK (and WORK/*/*, one level of scenarios) is one unit; units named by
--first go first, then the rest by name; a unit that no longer fits is named on stdout.
"""
import argparse
import os
import tarfile


def units(work):
    out = []
    for top in sorted(os.listdir(work)):
        path = os.path.join(work, top)
        if not os.path.isdir(path):
            out.append(top)
            continue
        subs = sorted(os.listdir(path))
        if any(os.path.isdir(os.path.join(path, s)) for s in subs):
            out += [os.path.join(top, s) for s in subs]
        else:
            out.append(top)
    return out


def size(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("work")
    p.add_argument("--parts", type=int, default=6)
    p.add_argument("--part-mb", type=float, default=15)
    p.add_argument("--total-mb", type=float, default=58)
    p.add_argument("--first", nargs="*", default=[])
    a = p.parse_args()
    all_units = units(a.work)
    first = [u for f in a.first for u in all_units if u == f or u.startswith(f)]
    order = list(dict.fromkeys(first + all_units))
    parts, cur, cur_size, total, left = [], [], 0, 0, []
    for u in order:
        s = size(os.path.join(a.work, u))
        if total + s > a.total_mb * 2**20 or s > a.part_mb * 2**20:
            left.append(f"{u} {s}")
            continue
        if cur_size + s > a.part_mb * 2**20:
            parts.append(cur)
            cur, cur_size = [], 0
        if len(parts) >= a.parts:
            left.append(f"{u} {s}")
            continue
        cur.append(u)
        cur_size += s
        total += s
    if cur and len(parts) < a.parts:
        parts.append(cur)
    for i, members in enumerate(parts):
        with tarfile.open(os.path.join(a.out, f"part{i}.tar"), "w") as t:
            for u in members:
                t.add(os.path.join(a.work, u), arcname=u)
    print(f"{len(parts)} parts, {total / 2**20:.1f} MiB; left out: {len(left)}")
    for line in left:
        print("left out:", line)


if __name__ == "__main__":
    main()
