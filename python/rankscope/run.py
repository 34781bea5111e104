"""`python -m rankscope.run [options] -- <command ...>` (also `rankscope run -- ...`): runs a
training command with the collector injected into every Python process it starts, with no
change to the training code.

How: the command runs with rankscope/_autostart first on PYTHONPATH, whose sitecustomize.py
(chaining to any other sitecustomize) installs an import hook; when the process imports
torch.optim, a global optimizer step hook is registered, and the first optimizer.step() of the
process creates its Tracker. Processes that never step an optimizer (torchrun's launcher,
DataLoader workers) never register with the daemon.
"""

import argparse
import os
import sys

AUTOSTART_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_autostart")


def build_env(env, args):
    env = dict(env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (AUTOSTART_DIR, env.get("PYTHONPATH", "")) if p)
    env["RANKSCOPE_AUTOSTART"] = "1"
    # The package itself must be importable by the job's interpreter.
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if pkg_parent not in env["PYTHONPATH"].split(os.pathsep):
        env["PYTHONPATH"] += os.pathsep + pkg_parent
    if args.socket:
        env["RANKSCOPE_SOCKET"] = args.socket
    if args.out_dir:
        env["RANKSCOPE_OUT_DIR"] = os.path.abspath(args.out_dir)
    if args.job:
        env["RANKSCOPE_JOB"] = args.job
    if args.no_auto_trigger:
        env["RANKSCOPE_AUTO_TRIGGER"] = "0"
    # The Flight Recorder (docs/hang.md): on by default in PyTorch 2.13's c10d (2000 entries),
    # but not in its TorchComms path; say it explicitly unless the user chose a size (0 = off).
    if "TORCH_FR_BUFFER_SIZE" not in env and "TORCH_NCCL_TRACE_BUFFER_SIZE" not in env:
        env["TORCH_FR_BUFFER_SIZE"] = "2000"
    return env


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:
        i = argv.index("--")
        own, command = argv[:i], argv[i + 1:]
    else:
        own, command = [], argv
    p = argparse.ArgumentParser(prog="rankscope run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--socket", help="the daemon's collector socket (@name or path); default $RANKSCOPE_SOCKET or @rankscoped")
    p.add_argument("--out-dir", help="where traces go when no daemon is reachable")
    p.add_argument("--job", help="job name (default: SLURM_JOB_ID, TORCHELASTIC_RUN_ID, or the launcher's pid)")
    p.add_argument("--no-auto-trigger", action="store_true", help="never trace automatically")
    args = p.parse_args(own)
    if not command:
        p.error("give the command to run after --, e.g. rankscope run -- torchrun --nproc_per_node=4 train.py")
    env = build_env(os.environ, args)
    try:
        os.execvpe(command[0], command, env)
    except OSError as e:
        print(f"rankscope run: cannot run {command[0]}: {e}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main())
