#!/usr/bin/env python3
"""Diff tests: a small trace written in the repository and the exact output rankscope prints for it.

Each case is a folder under tests/diff/ holding the trace (`trace.json`, or several trace files)
and one `<command>.expected` file per command run on it:

    info.expected       rankscope info <traces>
    analyze.expected    rankscope analyze <traces>

An expected file holds the command's stdout, then its stderr after a "[stderr]" line when there
is any, then "[exit code N]" when N is not 0. The command runs inside the case folder, so paths
in the output are the short file names. On a mismatch the test prints a unified diff; after an
intended change of the output, `--rebase` (or RANKSCOPE_REBASE=1) rewrites the expected files,
which are then reviewed like code.

    run_diff_test.py --rankscope build/dev/src/rankscope/cli/rankscope tests/diff/<case> [--rebase]
"""

import argparse
import difflib
import os
import pathlib
import subprocess
import sys

COMMANDS = {
    "info": ["info"],
    "analyze": ["analyze"],
}
TRACE_SUFFIXES = (".json", ".json.gz")


def traces_of(case):
    names = sorted(p.name for p in case.iterdir() if p.name.endswith(TRACE_SUFFIXES))
    if not names:
        raise SystemExit(f"{case}: no trace file (*.json, *.json.gz) in this case")
    return names


def run(rankscope, case, command, traces):
    proc = subprocess.run([rankscope, *COMMANDS[command], *traces], cwd=case, capture_output=True, text=True,
                          timeout=120)
    out = proc.stdout
    if proc.stderr:
        out += "[stderr]\n" + proc.stderr
    if proc.returncode != 0:
        out += f"[exit code {proc.returncode}]\n"
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rankscope", required=True, help="the rankscope binary")
    parser.add_argument("case", type=pathlib.Path, help="a folder under tests/diff/")
    parser.add_argument("--rebase", action="store_true", default=os.environ.get("RANKSCOPE_REBASE") == "1",
                        help="write the actual output into the expected files")
    args = parser.parse_args()
    case = args.case.resolve()
    rankscope = str(pathlib.Path(args.rankscope).resolve())
    expected_files = sorted(case.glob("*.expected"))
    if not expected_files:
        raise SystemExit(f"{case}: no <command>.expected file")
    traces = traces_of(case)
    failed = 0
    for expected_file in expected_files:
        command = expected_file.name[: -len(".expected")]
        if command not in COMMANDS:
            raise SystemExit(f"{expected_file}: unknown command '{command}' (known: {', '.join(COMMANDS)})")
        actual = run(rankscope, case, command, traces)
        if args.rebase:
            expected_file.write_text(actual)
            print(f"rebased {expected_file}")
            continue
        expected = expected_file.read_text()
        if actual == expected:
            print(f"ok {case.name}/{expected_file.name}")
            continue
        failed += 1
        sys.stdout.writelines(difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                                   fromfile=f"{case.name}/{expected_file.name}",
                                                   tofile=f"rankscope {' '.join(COMMANDS[command])} (actual)"))
    if failed:
        print(f"\n{failed} output(s) differ; if the change is intended, rerun with --rebase and review the diff")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
