"""Assembles a large Kineto trace from the real traces in ../shared/traces, for benchmarks.

The traceEvents of every corpus file are copied byte for byte (Kineto's own formatting and
number styles are kept) and repeated until the output reaches the requested size:

    python3 bench/make_big_trace.py --size-mb 1100 --out /tmp/big.pt.trace.json [--gzip]
"""

import argparse
import gzip
import json
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]


def event_texts(shared):
    """(file name, raw text between the brackets of its traceEvents array) for every trace."""
    for path in sorted((shared / "traces").rglob("*.json.gz")):
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
        key = text.index('"traceEvents"')
        start = text.index("[", key)
        _, end = json.JSONDecoder().raw_decode(text, start)
        inner = text[start + 1:end - 1].strip()
        if inner:
            yield path.name, inner


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size-mb", type=float, default=1100)
    p.add_argument("--out", required=True)
    p.add_argument("--gzip", action="store_true", help="also write OUT.gz")
    p.add_argument("--shared", default=str(REPO.parent / "shared"))
    args = p.parse_args()
    pieces = [t for _, t in event_texts(pathlib.Path(args.shared))]
    target = int(args.size_mb * 1e6)
    written = 0
    with open(args.out, "w", encoding="utf-8") as out:
        out.write('{\n  "schemaVersion": 1,\n  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},\n'
                  '  "traceEvents": [\n')
        first = True
        while written < target:
            for piece in pieces:
                if not first:
                    out.write(",\n")
                out.write(piece)
                written += len(piece) + 2
                first = False
                if written >= target:
                    break
        out.write('\n  ],\n  "traceName": "assembled"\n}\n')
    if args.gzip:
        with open(args.out, "rb") as src, gzip.open(args.out + ".gz", "wb", compresslevel=6) as dst:
            while chunk := src.read(1 << 24):
                dst.write(chunk)
    print(f"wrote {args.out}: {pathlib.Path(args.out).stat().st_size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
