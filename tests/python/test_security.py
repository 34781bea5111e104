"""The attacks of issue 10, replayed: an unprivileged local user against a root rankscoped.

The module creates two users (`useradd`; CI runs as root), starts root daemons on private sockets,
a private Kineto socket directory, private staging and output directories and free ports, and
runs every attack as the attacker (tests/python/attacks.py, standard library only). After each
test the canaries (root's files and directories beside the output directory) must be exactly as
they were: nothing outside the output directory may be read, written, chmod'ed or removed.

Daemon A is a default deployment (loopback, no token): the attacker may use the API. Daemon B has
a 1 MiB disk budget and a token: eviction, and what happens before authentication.
Memory is asserted (peak RSS of the daemon), never time.
"""

import gzip
import hashlib
import json
import os
import pathlib
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

import pytest

from capture_helpers import Daemon, py_spy_binary, wait_for

REPO = pathlib.Path(__file__).resolve().parents[2]
ATTACKER, VICTIM = "rsattacker", "rsvictim"
# What a daemon may hold at its peak through everything below (it starts at ~15 MB).
MEMORY_BOUND_MB = 150

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: creates users and runs a root daemon")


# ------------------------------------------------------------------------------------------------
# The world: users, directories, canaries, daemons

def ensure_user(name):
    try:
        pw = pwd.getpwnam(name)
        return pw.pw_uid, pw.pw_gid, False
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
        pw = pwd.getpwnam(name)
        return pw.pw_uid, pw.pw_gid, True


def peak_rss_mb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def snapshot(path):
    """Every entry below `path` (not following links): type, mode, owner, size, times, content."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        for name in [*dirnames, *filenames, "."]:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            digest = ""
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(open(p, "rb").read()).hexdigest()
            out[os.path.relpath(p, path)] = (st.st_mode, st.st_uid, st.st_gid, st.st_size, st.st_mtime_ns, digest)
    return out


def supports(binary, flag):
    # Lets the suite run against a daemon built before the flag existed (to see the attacks work there).
    return flag in subprocess.run([binary, "--help"], capture_output=True, text=True).stdout


class World:
    def __init__(self, rankscoped, rankscope):
        self.rankscoped, self.rankscope = rankscoped, rankscope
        self.attacker = ensure_user(ATTACKER)
        self.victim = ensure_user(VICTIM)
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="rs-sec-", dir="/tmp"))
        os.chmod(self.root, 0o755)
        self.canary = self.root / "canary"
        self.canary.mkdir(mode=0o755)
        self.secret = f"SECRET-{uuid.uuid4().hex}"
        (self.canary / "secret").write_text(self.secret + "\n")
        os.chmod(self.canary / "secret", 0o600)
        for name in ("victim1.txt", "victim2.txt", "victim3.txt"):
            (self.canary / name).write_text(f"root's own {name}\n")
        (self.canary / "big.bin").write_bytes(os.urandom(2 << 20))
        (self.canary / "dir").mkdir(mode=0o755)
        os.chmod(self.canary / "dir", 0o755)
        self.bin = self.root / "bin"
        self.bin.mkdir()
        shutil.copy(REPO / "tests/python/attacks.py", self.bin / "attacks.py")
        shutil.copytree(REPO / "python/rankscope", self.root / "pkg/rankscope")
        (self.bin / "victim.py").write_text(
            "import sys, time\nsys.path.insert(0, sys.argv[1])\nfrom rankscope import Tracker\n"
            "t = Tracker(auto_trigger=False)\nwhile True:\n    t.step()\n    time.sleep(0.05)\n")
        self.home = self.root / "home"
        self.home.mkdir()
        os.chown(self.home, self.attacker[0], self.attacker[1])
        subprocess.run(["chmod", "-R", "a+rX", str(self.bin), str(self.root / "pkg")], check=True)
        self.python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        self.kineto_dir = self.root / "sock"
        self.kineto_dir.mkdir(mode=0o755)
        self.procs = []
        quota = ["--max-processes-per-uid", "8"] if supports(rankscoped, "--max-processes-per-uid") else []
        if py_spy_binary():
            quota += ["--py-spy", py_spy_binary()]
        self.a = self.start_daemon("a", [
            "--kineto-socket-dir", str(self.kineto_dir), "--kineto-staging", str(self.root / "staging"),
            "--telemetry-interval-ms", "200", "--telemetry-retention-s", "5", "--telemetry-margin-s", "1", *quota],
            kineto=True)
        self.token = uuid.uuid4().hex
        (self.root / "token").write_text(self.token + "\n")
        os.chmod(self.root / "token", 0o600)
        self.b = self.start_daemon("b", ["--disk-budget-mb", "1", "--no-telemetry", "--token-file", str(self.root / "token")])
        self.baseline = self.outside_snapshot()

    def start_daemon(self, name, extra, kineto=False):
        d = Daemon(self.rankscoped, self.root / f"out-{name}", kineto=kineto, extra=extra)
        return d.start()

    def outside_snapshot(self):
        """Everything under the test's root except what the daemons and the attacker own by design."""
        snap = snapshot(self.canary)
        daemons_own = ("rankscoped-", "ready-", "out-", "staging")
        snap["<root>"] = sorted(p.name for p in self.root.iterdir() if not p.name.startswith(daemons_own))
        return snap

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.a.stop()
        self.b.stop()
        shutil.rmtree(self.root, ignore_errors=True)
        for name, (_, _, created) in ((ATTACKER, self.attacker), (VICTIM, self.victim)):
            if created:
                subprocess.run(["userdel", name], check=False)

    # -- running things as the attacker / the victim
    def _cmd(self, *args):
        return [self.python, str(self.bin / "attacks.py"), *map(str, args)]

    def run_as(self, who, *args, timeout=120, env=None):
        uid, gid, _ = who
        proc = subprocess.run(self._cmd(*args), user=uid, group=gid, extra_groups=[], cwd=self.home, env=env,
                              capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def spawn_as(self, who, *args, env=None, cmd=None):
        uid, gid, _ = who
        p = subprocess.Popen(cmd or self._cmd(*args), user=uid, group=gid, extra_groups=[], cwd=self.home,
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def victim_tracker(self, daemon, job):
        """A real rankscope Tracker (the collector), stepping every 50 ms, as the victim user."""
        env = dict(PATH="/usr/bin:/bin", RANK="0", WORLD_SIZE="1", RANKSCOPE_JOB=job, RANKSCOPE_SOCKET=daemon.socket,
                   RANKSCOPE_AUTO_TRIGGER="0")
        p = self.spawn_as(self.victim, env=env, cmd=[self.python, str(self.bin / "victim.py"), str(self.root / "pkg")])
        wait_for(lambda: self.process(daemon, p.pid), 30, f"the victim tracker of {job} to register")
        return p

    def log(self, name):
        path = self.home / f"{name}-{uuid.uuid4().hex[:6]}.jsonl"
        path.touch()
        os.chown(path, self.attacker[0], self.attacker[1])
        return path

    # -- the API, as root
    def api(self, daemon, method, path, body=None, token=None, timeout=30):
        req = urllib.request.Request(f"http://127.0.0.1:{daemon.port}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode())
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                data = r.read()
                is_json = r.headers.get("Content-Type", "").startswith("application/json")
                return r.status, json.loads(data or b"null") if is_json else data.decode(), dict(r.headers)
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                body = json.loads(text)
            except ValueError:
                body = text.decode(errors="replace")
            return e.code, body, dict(e.headers)

    def processes(self, daemon, token=None):
        return self.api(daemon, "GET", "/v1/processes", token=token)[1]["processes"]

    def process(self, daemon, pid, token=None):
        return next((p for p in self.processes(daemon, token) if p["pid"] == pid), None)

    def capture(self, daemon, capture_id, token=None):
        return self.api(daemon, "GET", f"/v1/captures/{capture_id}", token=token)[1]

    def wait_saved(self, daemon, capture_id, token=None, timeout=60):
        return wait_for(lambda: (c := self.capture(daemon, capture_id, token)).get("saved") and c, timeout,
                        f"capture {capture_id} to be saved")

    def clear_out(self, daemon):
        for p in daemon.out_dir.iterdir():
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()


@pytest.fixture(scope="module")
def world(rankscoped_bin, rankscope_bin):
    w = World(rankscoped_bin, rankscope_bin)
    yield w
    w.close()


@pytest.fixture(autouse=True)
def canaries_intact(world):
    yield
    for p in world.procs:  # the test's own processes end with it
        if p.poll() is None:
            p.kill()
            p.wait()
    world.procs.clear()
    assert world.outside_snapshot() == world.baseline, "something outside the output directories changed"
    for d in (world.a, world.b):
        assert d.proc.poll() is None, f"a daemon died: {d.log.read_text()[-2000:]}"
        assert peak_rss_mb(d.proc.pid) < MEMORY_BOUND_MB


def all_bytes_under(directory):
    """The contents of every regular file below `directory`, gunzipped where gzip."""
    for p in pathlib.Path(directory).rglob("*"):
        if p.is_file() and not p.is_symlink():
            data = p.read_bytes()
            yield p, gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


# ------------------------------------------------------------------------------------------------
# Trust in datagrams

def test_claimed_pid_cannot_take_over_another_process(world, run_rankscope):
    """An attacker claims the victim's pid (and an absurd step): the victim's trace requests, its
    aligned start and its reports stay the victim's."""
    victim = world.victim_tracker(world.a, "victimjob")
    log = world.log("takeover")
    world.spawn_as(world.attacker, "collector", "--socket", world.a.socket, "--claim-pid", victim.pid,
                   "--job", "victimjob", "--step", 1_000_000, "--step-ms", 1, "--report", "failed",
                   "--report-as-pid", victim.pid, "--log", log)
    time.sleep(1.5)
    entry = world.process(world.a, victim.pid)
    assert entry["uid"] == world.victim[0] and entry["step"] < 100_000, entry
    out = json.loads(run_rankscope("trace", "--port", world.a.port, "--job", "victimjob", "--steps", 2,
                                   "--timeout-s", 20, "--json", check=False).stdout)
    (target,) = out["hosts"][0]["targets"]
    assert target["pid"] == victim.pid
    assert target["start_step"] < 100_000, target  # not poisoned to ~1,000,000
    time.sleep(1.5)
    target = world.capture(world.a, out["hosts"][0]["id"])["targets"][0]
    assert "disk full" not in target["detail"], target
    assert not any(json.loads(line).get("got", {}).get("op") == "trace" for line in log.read_text().splitlines())


def test_claimed_uid_pid_and_impossible_rank_are_not_registered(world):
    world.spawn_as(world.attacker, "collector", "--socket", world.a.socket, "--claim-pid", 1, "--claim-uid", 0,
                   "--job", "rootjob", "--raw-rank", "1e30", "--seconds", 5)
    second = world.spawn_as(world.attacker, "collector", "--socket", world.a.socket, "--claim-pid", 1,
                            "--claim-uid", 0, "--job", "rootjob2", "--rank", 3, "--seconds", 5)
    wait_for(lambda: any(p["job"] == "rootjob2" for p in world.processes(world.a)), 20, "the second claim")
    procs = world.processes(world.a)
    assert not any(p["pid"] == 1 for p in procs), procs
    assert not any(p["job"] == "rootjob" for p in procs), procs  # rank 1e30: refused whole
    (mine,) = [p for p in procs if p["job"] == "rootjob2"]
    assert mine["pid"] == second.pid and mine["uid"] == world.attacker[0], mine


def test_auto_trigger_from_a_claimed_pid_traces_nothing(world):
    victim = world.victim_tracker(world.a, "autojob")
    world.run_as(world.attacker, "auto", "--socket", world.a.socket, "--claim-pid", victim.pid)
    time.sleep(1.5)
    captures = world.api(world.a, "GET", "/v1/captures")[1]["captures"]
    assert not [c for c in captures if c["job"] == "autojob"], captures


def test_collector_takes_requests_only_from_the_daemon(world):
    """Pushed straight to the victim's own socket: a forged "welcome" naming another output
    directory and a trace that would wait forever. The collector ignores both."""
    victim = world.victim_tracker(world.a, "pushjob")
    out = json.loads(world.run_as(world.attacker, "push-to-collector", "--victim-pid", victim.pid,
                                  "--fake-out-dir", str(world.home)))
    assert out["sockets"], "the victim's collector socket was not found"
    time.sleep(3)  # more than one heartbeat
    assert world.process(world.a, victim.pid)["busy"] is False


def test_local_user_cannot_capture_another_users_job(world):
    """Traces and stack snapshots of someone else's job (their code paths, slowed by profiling):
    a local user may capture only their own processes."""
    victim = world.victim_tracker(world.a, "privatejob")
    for path, body in (("/v1/snapshot", {"selection": {"job": "privatejob"}}),
                       ("/v1/trace", {"selection": {"job": "privatejob"}, "steps": 1, "timeout_s": 30})):
        out = json.loads(world.run_as(world.attacker, "post", "--port", world.a.port, "--path", path,
                                      "--body", json.dumps(body)))
        assert out["status"] == 404 and "belongs to you" in out["body"]["error"], out
    time.sleep(3)
    assert world.process(world.a, victim.pid)["busy"] is False
    assert not [c for c in world.api(world.a, "GET", "/v1/captures")[1]["captures"] if c["job"] == "privatejob"]


# ------------------------------------------------------------------------------------------------
# Validated requests

def test_far_start_step_is_refused_and_does_not_wedge_the_collector(world):
    """Asked by root (another user is refused before the range matters, see above)."""
    victim = world.victim_tracker(world.a, "wedgejob")
    status, body, _ = world.api(world.a, "POST", "/v1/trace", {"selection": {"job": "wedgejob"}, "steps": 1,
                                                                "start_step": 9_000_000_000_000})
    assert status == 400 and "ahead" in body["error"], body
    time.sleep(3)
    assert world.process(world.a, victim.pid)["busy"] is False


@pytest.mark.parametrize("body", [{"steps": 3, "selection": {"ranks": [1e20]}}, {"steps": 2.5},
                                  {"duration_ms": 1e3}, {"steps": 3, "timeout_s": 1e9}])
def test_float_fields_are_refused(world, body):
    out = json.loads(world.run_as(world.attacker, "post", "--port", world.a.port, "--body", json.dumps(body)))
    assert out["status"] == 400 and "integer" in out["body"]["error"], out


def test_wrong_method_is_405(world):
    for method, path, allow in [("POST", "/v1/status", "GET"), ("GET", "/v1/trace", "POST"),
                                ("DELETE", "/v1/captures", "GET"), ("PUT", "/v1/files", "GET")]:
        status, body, headers = world.api(world.a, method, path, body={} if method in ("POST", "PUT") else None)
        assert status == 405 and headers.get("Allow") == allow, (method, path, status, body)
    assert world.api(world.a, "GET", "/v1/nothing")[0] == 404


def test_dead_process_is_answered_at_once(world):
    victim = world.victim_tracker(world.a, "deadjob")
    victim.kill()
    victim.wait()
    status, body, _ = world.api(world.a, "POST", "/v1/trace", {"selection": {"job": "deadjob"}, "steps": 1})
    assert status == 404, body  # not a target that waits for its timeout
    # Dying while a capture waits for it: failed at once, with the reason.
    victim = world.victim_tracker(world.a, "deadjob2")
    step = world.process(world.a, victim.pid)["step"]
    status, body, _ = world.api(world.a, "POST", "/v1/trace", {"selection": {"job": "deadjob2"}, "steps": 1,
                                                                "start_step": step + 5000, "timeout_s": 300})
    assert status == 200, body
    victim.kill()
    victim.wait()
    c = wait_for(lambda: (c := world.capture(world.a, body["id"]))["finished"] and c, 30, "the target to fail")
    assert "exited" in c["targets"][0]["detail"], c


# ------------------------------------------------------------------------------------------------
# Files: staging, planted symlinks, swapped directories

def kineto_env(world, job, **extra):
    return dict(PATH="/usr/bin:/bin", RANK="0", WORLD_SIZE="1", RANKSCOPE_JOB=job, **extra)


def test_kineto_staging_symlink_does_not_leak_root_files(world):
    """The staged trace is a symlink to a root-only file: the daemon must not read it for them."""
    log = world.log("staging")
    trace_id = f"leak-{uuid.uuid4().hex[:6]}"
    world.spawn_as(world.attacker, "kineto", "--socket-dir", world.kineto_dir, "--port", world.a.port, "--request",
                   json.dumps({"trace_id": trace_id, "selection": {"job": "leakjob"}, "steps": 1, "timeout_s": 30}),
                   "--staged-symlink", world.canary / "secret", "--log", log, env=kineto_env(world, "leakjob"))
    c = wait_for(lambda: (c := world.capture(world.a, trace_id)).get("finished") and c, 60, "the Kineto target")
    assert c["targets"][0]["state"] == "failed" and "symlink" in c["targets"][0]["detail"], c
    for path, data in all_bytes_under(world.a.out_dir):
        assert world.secret.encode() not in data, path
    assert not any(world.secret.encode() in data for _, data in all_bytes_under(world.root / "staging"))


def test_ondemand_trace_dir_symlink_is_not_chmodded(world):
    """The process's own KINETO_ONDEMAND_TRACE_DIR holds a symlink where the daemon would stage."""
    od = world.home / f"od-{uuid.uuid4().hex[:6]}"
    od.mkdir()
    os.chown(od, world.attacker[0], world.attacker[1])
    trace_id = f"od-{uuid.uuid4().hex[:6]}"
    world.spawn_as(world.attacker, "kineto", "--socket-dir", world.kineto_dir, "--port", world.a.port, "--request",
                   json.dumps({"trace_id": trace_id, "selection": {"job": "odjob"}, "steps": 1, "timeout_s": 30}),
                   "--ondemand-plant", f"rankscope-{trace_id}={world.canary / 'dir'}",
                   env=kineto_env(world, "odjob", KINETO_ONDEMAND_TRACE_DIR=str(od)))
    wait_for(lambda: world.capture(world.a, trace_id).get("finished"), 60, "the Kineto target")
    assert stat.S_IMODE(os.lstat(world.canary / "dir").st_mode) == 0o755


def test_planted_tmp_symlinks_are_not_followed_nor_listed(world):
    """Symlinks planted in the attacker's own capture directory where the daemon writes its
    temporary files (manifest, telemetry) and one to a root-only file: nothing is written
    through them and /v1/files shows none of their targets."""
    host = world.api(world.a, "GET", "/v1/status")[1]["host"]
    sidecar = "telemetry." + "".join(c if c.isalnum() or c in "-_." else "_" for c in host) + ".tsv"
    log = world.log("plant")
    world.spawn_as(world.attacker, "collector", "--socket", world.a.socket, "--job", "plantjob",
                   "--plant", f".capture.manifest.tmp={world.canary / 'victim1.txt'}",
                   "--plant", f"{sidecar}.tmp={world.canary / 'victim2.txt'}",
                   "--plant", f"shadow={world.canary / 'secret'}",
                   "--write-bytes", 1000, "--report", "done", "--log", log)
    wait_for(lambda: any(p["job"] == "plantjob" for p in world.processes(world.a)), 20, "the attacker to register")
    status, body, _ = world.api(world.a, "POST", "/v1/trace", {"selection": {"job": "plantjob"}, "steps": 1,
                                                                "timeout_s": 30})
    assert status == 200, body
    c = world.wait_saved(world.a, body["id"])
    assert c["targets"][0]["state"] == "done", c
    assert "planted" in log.read_text()
    files = world.api(world.a, "GET", "/v1/files")[1]["files"]
    assert not any(".." in f["path"] or "canary" in f["path"] or f["path"].endswith("shadow") for f in files), files
    manifest = pathlib.Path(c["dir"]) / "capture.manifest"
    assert json.loads(manifest.read_text())["id"] == body["id"]


def test_kineto_gzip_tmp_symlink_is_not_followed(world):
    log = world.log("gztmp")
    trace_id = f"gz-{uuid.uuid4().hex[:6]}"
    world.spawn_as(world.attacker, "kineto", "--socket-dir", world.kineto_dir, "--port", world.a.port, "--request",
                   json.dumps({"trace_id": trace_id, "selection": {"job": "gzjob"}, "steps": 1, "timeout_s": 30}),
                   "--capture-plant", f"rank0.pt.trace.json.gz.tmp={world.canary / 'victim3.txt'}", "--log", log,
                   env=kineto_env(world, "gzjob"))
    c = wait_for(lambda: (c := world.capture(world.a, trace_id)).get("saved") and c, 60, "the Kineto trace")
    assert c["targets"][0]["state"] == "done", c
    assert json.loads(gzip.decompress((pathlib.Path(c["dir"]) / "rank0.pt.trace.json.gz").read_bytes()))["traceEvents"]


def test_capture_directory_cannot_be_swapped_for_a_symlink(world):
    log = world.log("swap")
    world.spawn_as(world.attacker, "collector", "--socket", world.a.socket, "--job", "swapjob",
                   "--swap-capture-dir", world.canary / "dir", "--report", "done", "--log", log)
    wait_for(lambda: any(p["job"] == "swapjob" for p in world.processes(world.a)), 20, "the attacker to register")
    status, body, _ = world.api(world.a, "POST", "/v1/trace", {"selection": {"job": "swapjob"}, "steps": 1,
                                                                "timeout_s": 30})
    assert status == 200, body
    world.wait_saved(world.a, body["id"])
    assert "swap_failed" in log.read_text()
    assert not list((world.canary / "dir").iterdir())


# ------------------------------------------------------------------------------------------------
# Hang snapshots (issue 13): py-spy as root, text from collectors, files served to other daemons

@pytest.mark.parametrize("program", ["/usr/bin/passwd", f"/usr/sbin/unix_chkpwd {ATTACKER} nullok"],
                         ids=["setuid", "setgid"])
def test_py_spy_is_never_run_on_a_process_that_became_another_users(world, program):
    """A registered collector's process execs a setuid-root program (or a setgid-shadow one),
    same pid, same start time, and so never answers the snapshot: the daemon must not ptrace it
    with py-spy (it would dump memory that its user may not read — a root process's, or one that
    read /etc/shadow — into the attacker's directory)."""
    if not shutil.which("py-spy"):
        pytest.fail("py-spy is missing: scripts/setup.sh --deps installs it")
    job = f"execjob-{program.split()[0].rsplit('/', 1)[1]}"
    log = world.log(job)
    proc = world.spawn_as(world.attacker, "collector", "--socket", world.a.socket, "--job", job,
                          "--exec-on-request", program, "--seconds", 300, "--log", log)
    wait_for(lambda: world.process(world.a, proc.pid), 20, "the attacker to register")
    out = json.loads(world.run_as(world.attacker, "post", "--port", world.a.port, "--path", "/v1/snapshot",
                                  "--body", json.dumps({"selection": {"job": job}, "timeout_s": 60})))
    assert out["status"] == 200, out
    c = wait_for(lambda: (c := world.capture(world.a, out["body"]["id"]))["finished"] and c, 120, "the target")
    status = {line.split(":")[0]: line.split()[1:] for line in open(f"/proc/{proc.pid}/status") if ":" in line}
    if "passwd" in program:  # it is passwd now, running as root
        assert status["Uid"] == [str(world.attacker[0]), "0", "0", "0"], status["Uid"]
    else:  # unix_chkpwd, as the attacker but with group shadow
        assert status["Uid"] == [str(world.attacker[0])] * 4 and status["Gid"][1] != str(world.attacker[1]), status
    (target,) = c["targets"]
    assert target["state"] == "failed" and "no longer the registered process" in target["detail"], target
    assert not (pathlib.Path(c["dir"]) / "rank0.stacks.txt").exists()
    proc.kill()  # it still counts against the attacker's quota of registered processes
    proc.wait()


def test_py_spy_runs_as_the_users_process_with_only_cap_sys_ptrace(world):
    """A victim's rank stuck in C holding the GIL: its collector cannot answer, so the root daemon
    takes its stack with py-spy — run as the victim with CAP_SYS_PTRACE only (py-spy opens the
    files the process maps by the paths it shows: as root it could be pointed at anything)."""
    if not py_spy_binary():
        pytest.fail("py-spy is missing: scripts/setup.sh --deps installs it")
    script = world.home / "victim_gil.py"
    script.write_text("import ctypes, sys, time\nsys.path.insert(0, sys.argv[1])\nfrom rankscope import Tracker\n"
                      "t = Tracker(auto_trigger=False)\nfor _ in range(80):  # 4 s: heartbeats tell the daemon\n    t.step()\n"
                      "    time.sleep(0.05)\n"
                      "open(sys.argv[2], 'w').close()\nctypes.PyDLL(None).sleep(600)  # in C, holding the GIL\n")
    script.chmod(0o644)
    env = dict(PATH="/usr/bin:/bin", RANK="0", WORLD_SIZE="1", RANKSCOPE_JOB="giljob", RANKSCOPE_SOCKET=world.a.socket,
               RANKSCOPE_AUTO_TRIGGER="0")
    ready = pathlib.Path(tempfile.mkdtemp(dir=world.home)) / "in-c"
    os.chown(ready.parent, world.victim[0], world.victim[1])
    proc = world.spawn_as(world.victim, env=env, cmd=[world.python, str(script), str(world.root / "pkg"), str(ready)])
    wait_for(lambda: (p := world.process(world.a, proc.pid)) and p["step"] >= 1, 30, "the victim to register and step")
    wait_for(ready.exists, 60, "the victim to enter C holding the GIL")
    status, body, _ = world.api(world.a, "POST", "/v1/snapshot", {"selection": {"job": "giljob"}, "timeout_s": 60})
    assert status == 200, body
    c = world.wait_saved(world.a, body["id"], timeout=90)
    (target,) = c["targets"]
    assert target["state"] == "done" and "py-spy" in target["detail"], target
    stacks = (pathlib.Path(c["dir"]) / "rank0.stacks.txt").read_text()
    assert "taken: py-spy dump --native" in stacks and "Native " in stacks, stacks[:2000]
    assert f"taken_as: uid {world.victim[0]} with CAP_SYS_PTRACE" in stacks, stacks[:600]
    proc.kill()
    proc.wait()


def test_collector_text_cut_inside_a_character_does_not_end_the_daemon(world):
    """A collector's error text is kept to 300 bytes; cut inside a two-byte character it was
    invalid UTF-8, and writing the manifest threw in the daemon's watcher thread: the daemon
    ended. (The autouse check also asserts both daemons are alive.)"""
    world.spawn_as(world.attacker, "collector", "--socket", world.a.socket, "--job", "utf8job", "--report", "failed",
                   "--report-error", "a" + "\u00e9" * 200)
    wait_for(lambda: any(p["job"] == "utf8job" for p in world.processes(world.a)), 20, "the attacker to register")
    status, body, _ = world.api(world.a, "POST", "/v1/snapshot", {"selection": {"job": "utf8job"}, "timeout_s": 30})
    assert status == 200, body
    c = world.wait_saved(world.a, body["id"])
    detail = c["targets"][0]["detail"]
    assert detail.startswith("the collector failed: a\u00e9\u00e9") and "\ufffd" not in detail, detail
    manifest = json.loads((pathlib.Path(c["dir"]) / "capture.manifest").read_text())
    assert manifest["targets"][0]["detail"] == detail


def test_a_user_cannot_claim_a_peer_daemons_hang(world):
    """hang_reason in a snapshot request is how a peer's daemon says it detected a hang: the
    daemon then records a result and holds back its own snapshot of the job. From a local user it
    is refused (else anyone could push other users' hang results out of the bounded list)."""
    proc = world.spawn_as(world.attacker, "collector", "--socket", world.a.socket, "--job", "claimjob",
                          "--report", "done", "--write-bytes", 100)
    wait_for(lambda: world.process(world.a, proc.pid), 20, "the attacker to register")
    before = world.api(world.a, "GET", "/v1/hangs")[1]
    out = json.loads(world.run_as(world.attacker, "post", "--port", world.a.port, "--path", "/v1/snapshot",
                                  "--body", json.dumps({"selection": {"job": "claimjob"}, "hang_reason": "x"})))
    assert out["status"] == 403 and "hang_reason" in out["body"]["error"], out
    assert world.api(world.a, "GET", "/v1/hangs")[1]["hangs"] == before["hangs"]
    out = json.loads(world.run_as(world.attacker, "post", "--port", world.a.port, "--path", "/v1/snapshot",
                                  "--body", json.dumps({"selection": {"job": "claimjob"}, "as_uid": 0})))
    assert out["status"] == 403, out
    # A peer's daemon (root here) asks on behalf of the attacker's job, whose name a victim uses
    # on this host: the attacker's uid goes with it, and the victim's ranks are not taken.
    world.victim_tracker(world.a, "peerjob")
    status, body, _ = world.api(world.a, "POST", "/v1/snapshot", {"selection": {"job": "peerjob"},
                                                                  "hang_reason": "x", "as_uid": world.attacker[0]})
    assert status == 404 and "no process of job 'peerjob'" in body["error"], body  # only the attacker's are seen
    assert not [c for c in world.api(world.a, "GET", "/v1/captures")[1]["captures"] if c.get("job") == "peerjob"]
    assert world.api(world.a, "GET", "/v1/hangs")[1]["hangs"] == before["hangs"]
    # The same request without it is an ordinary snapshot of the attacker's own job.
    out = json.loads(world.run_as(world.attacker, "post", "--port", world.a.port, "--path", "/v1/snapshot",
                                  "--body", json.dumps({"selection": {"job": "claimjob"}})))
    assert out["status"] == 200, out
    world.wait_saved(world.a, out["body"]["id"])
    proc.kill()
    proc.wait()


def test_snapshot_files_are_served_only_to_their_user(world):
    """GET /v1/captures/<id>/files/<name>, how daemons gather a multi-host snapshot, hands out
    stacks: only the snapshot's own files, only regular files of its user, and only to that
    user, root or a token holder."""
    world.victim_tracker(world.a, "filesjob")
    status, body, _ = world.api(world.a, "POST", "/v1/snapshot", {"selection": {"job": "filesjob"}, "timeout_s": 30})
    assert status == 200, body
    c = world.wait_saved(world.a, body["id"])
    assert "rank0.stacks.txt" in c["files"] and "capture.manifest" in c["files"], c
    path = f"/v1/captures/{body['id']}/files/rank0.stacks.txt"
    status, text, _ = world.api(world.a, "GET", path)
    assert status == 200 and text.startswith("rankscope-stacks 1"), (status, text[:200])
    out = json.loads(world.run_as(world.attacker, "post", "--port", world.a.port, "--method", "GET", "--path", path))
    assert out["status"] == 403, out
    for name in ("hang.report", "rank1.stacks.txt", ".capture.manifest.tmp"):
        assert world.api(world.a, "GET", f"/v1/captures/{body['id']}/files/{name}")[0] == 404, name
    # The attacker's own snapshot, its stacks file swapped for a symlink to a root-only file
    # once the daemon took it: refused, not followed.
    world.spawn_as(world.attacker, "collector", "--socket", world.a.socket, "--job", "swapfilejob",
                   "--write-bytes", 100, "--report", "done")
    wait_for(lambda: any(p["job"] == "swapfilejob" for p in world.processes(world.a)), 20, "the attacker to register")
    out = json.loads(world.run_as(world.attacker, "post", "--port", world.a.port, "--path", "/v1/snapshot",
                                  "--body", json.dumps({"selection": {"job": "swapfilejob"}, "timeout_s": 30})))
    c = world.wait_saved(world.a, out["body"]["id"])
    assert c["targets"][0]["state"] == "done", c
    stacks = pathlib.Path(c["dir"]) / "rank0.stacks.txt"
    world.spawn_as(world.attacker, cmd=["ln", "-sf", str(world.canary / "secret"), str(stacks)]).wait()
    assert stacks.is_symlink()
    out = json.loads(world.run_as(world.attacker, "post", "--port", world.a.port, "--method", "GET",
                                  "--path", f"/v1/captures/{c['id']}/files/rank0.stacks.txt"))
    assert out["status"] == 409 and world.secret not in json.dumps(out), out


# ------------------------------------------------------------------------------------------------
# The disk budget (daemon B: 1 MiB, token)

def start_writer(world, job, nbytes):
    """A collector of the victim user that writes `nbytes` when asked and reports done."""
    world.spawn_as(world.victim, "collector", "--socket", world.b.socket, "--job", job, "--write-bytes", nbytes,
                   "--report", "done")
    wait_for(lambda: any(p["job"] == job for p in world.processes(world.b, world.token)), 20, f"{job} to register")


def trace_b(world, job, capture_id):
    status, body, _ = world.api(world.b, "POST", "/v1/trace", {"trace_id": capture_id, "selection": {"job": job},
                                                                "steps": 1, "timeout_s": 30}, token=world.token)
    assert status == 200, body
    return world.wait_saved(world.b, capture_id, world.token)


def test_eviction_never_leaves_the_output_directory(world):
    """A symlink to a large file outside, planted in the attacker's capture directory, must not
    make the budget remove anything outside (the old code removed <out>/../canary)."""
    world.clear_out(world.b)
    world.spawn_as(world.attacker, "collector", "--socket", world.b.socket, "--job", "evjob",
                   "--plant", f"big={world.canary / 'big.bin'}", "--write-bytes", 1000, "--report", "done")
    wait_for(lambda: any(p["job"] == "evjob" for p in world.processes(world.b, world.token)), 20, "the attacker")
    c = trace_b(world, "evjob", "ev1")
    assert c["targets"][0]["state"] == "done", c
    assert (world.canary / "big.bin").exists()


def test_eviction_is_oldest_first_and_keeps_the_capture_just_written(world):
    world.clear_out(world.b)
    start_writer(world, "budgetjob", 400_000)
    for i in range(3):
        c = trace_b(world, "budgetjob", f"cap{i}")
    assert c["disk_budget"]["removed"] == ["budgetjob/cap0"], c["disk_budget"]
    assert sorted(p.name for p in (world.b.out_dir / "budgetjob").iterdir()) == ["cap1", "cap2"]
    # Alone larger than the budget: the older ones go, the new one stays, and it is said so.
    for p in world.procs:
        p.kill()
    start_writer(world, "bigjob", 1_500_000)
    c = trace_b(world, "bigjob", "huge")
    assert c["disk_budget"]["removed"] == ["budgetjob/cap1", "budgetjob/cap2"], c["disk_budget"]
    assert c["disk_budget"]["over_budget"] is True
    assert (world.b.out_dir / "bigjob/huge/rank0.pt.trace.json.gz").stat().st_size == 1_500_000


# ------------------------------------------------------------------------------------------------
# Memory and connections

def test_http_body_is_bounded_before_authentication(world):
    out = json.loads(world.run_as(world.attacker, "http-body", "--port", world.b.port, "--mib", 256))
    assert out["reply"].split()[1] in ("401", "413"), out
    assert peak_rss_mb(world.b.proc.pid) < MEMORY_BOUND_MB


def test_http_header_flood_is_bounded(world):
    out = json.loads(world.run_as(world.attacker, "http-headers", "--port", world.b.port, "--mib", 24))
    assert out["sent_mib"] < 24 or out["reply"].split()[1] in ("400", "431"), out
    assert peak_rss_mb(world.b.proc.pid) < MEMORY_BOUND_MB


def test_idle_connections_do_not_starve_the_api(world):
    world.spawn_as(world.attacker, "http-idle", "--port", world.a.port, "--connections", 200, "--seconds", 90)
    time.sleep(3)
    for _ in range(5):
        status, body, _ = world.api(world.a, "GET", "/v1/status", timeout=30)
        assert status == 200
    assert body["http"]["refused_per_peer"] > 0, body["http"]


def test_spoofed_heartbeats_are_bounded(world):
    world.run_as(world.attacker, "beats", "--socket", world.a.socket, "--count", 4000, "--host-bytes", 60000)
    world.run_as(world.attacker, "fork-hellos", "--socket", world.a.socket, "--processes", 20, "--hold-s", 3)
    time.sleep(1)
    assert peak_rss_mb(world.a.proc.pid) < MEMORY_BOUND_MB


def test_spoofed_heartbeats_meet_the_per_user_quota(world):
    world.spawn_as(world.attacker, "fork-hellos", "--socket", world.a.socket, "--processes", 20, "--hold-s", 20)
    time.sleep(4)
    mine = [p for p in world.processes(world.a) if p["uid"] == world.attacker[0]]
    assert 0 < len(mine) <= 8, len(mine)
    assert all(len(p["host"]) <= 255 for p in mine)


def test_telemetry_series_of_departed_processes_expire(world):
    def series():
        with urllib.request.urlopen(f"http://127.0.0.1:{world.a.port}/metrics", timeout=30) as r:
            text = r.read().decode()
        (line,) = [l for l in text.splitlines() if l.startswith("rankscope_telemetry_series")]
        return float(line.rsplit(" ", 1)[1]), text
    before, _ = series()
    churn = world.spawn_as(world.attacker, "churn", "--socket", world.a.socket, "--seconds", 6, "--every-s", 0.2)
    time.sleep(3)
    _, text = series()
    jobs = {l.split('job="', 1)[1].split('"', 1)[0] for l in text.splitlines() if 'job="churn' in l}
    assert len(jobs) <= 1, jobs  # the job a process registered with is the one it keeps
    churn.wait(timeout=30)
    wait_for(lambda: series()[0] <= before + 5, 60, "the departed process's series to expire")


def test_status_is_cheap_with_100k_files(world):
    bulk = world.a.out_dir / "bulkjob" / "bulk"
    bulk.mkdir(parents=True)
    for i in range(100_000):
        (bulk / f"f{i}").touch()
    try:
        before = cpu_seconds(world.a.proc.pid)
        for _ in range(10):
            assert world.api(world.a, "GET", "/v1/status")[0] == 200
        assert cpu_seconds(world.a.proc.pid) - before < 1.0  # CPU seconds, not wall time
        files = world.api(world.a, "GET", "/v1/files")[1]
        assert files["total_files"] >= 100_000 and files["truncated"] and len(files["files"]) == 5000
    finally:
        shutil.rmtree(world.a.out_dir / "bulkjob")


def test_token_file_is_validated(world):
    bad = world.root / "badtoken"
    cases = [("\t" * 16 + "\n", 0o600, "spaces"), (uuid.uuid4().hex + "\n", 0o644, "chmod 600")]
    for text, mode, expected in cases:
        bad.write_text(text)
        os.chmod(bad, mode)
        proc = subprocess.Popen([world.rankscoped, "--out-dir", str(world.root / "out-token"), "--port", "0",
                                 "--token-file", str(bad), "--no-kineto", "--no-telemetry", "--socket",
                                 f"@rs-token-{uuid.uuid4().hex[:8]}"], stderr=subprocess.PIPE, text=True)
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail(f"rankscoped accepted a token file with mode {mode:o}: {text!r}")
        assert proc.returncode != 0 and expected in err, err
    link = world.root / "tokenlink"
    link.symlink_to(world.root / "token")
    proc = subprocess.run([world.rankscoped, "--out-dir", str(world.root / "out-token"), "--port", "0", "--token-file",
                           str(link), "--no-kineto", "--no-telemetry"], capture_output=True, text=True, timeout=20)
    assert proc.returncode != 0 and "symlink" in proc.stderr
    bad.unlink()
    link.unlink()
    shutil.rmtree(world.root / "out-token", ignore_errors=True)


def test_cli_says_when_the_daemon_dies_during_wait(world, rankscope_bin):
    c = Daemon(world.rankscoped, world.root / "out-c", extra=["--no-telemetry"]).start()
    try:
        job = world.spawn_as(world.victim, "collector", "--socket", c.socket, "--job", "killjob")  # never reports
        wait_for(lambda: world.process(c, job.pid), 20, "the collector")
        cli = subprocess.Popen([rankscope_bin, "trace", "--port", str(c.port), "--steps", "2", "--wait",
                                "--timeout-s", "60"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(3)
        c.kill()
        out, _ = cli.communicate(timeout=60)
        assert cli.returncode != 0
        assert "stopped answering" in out and "nothing to trace" not in out, out
    finally:
        c.kill()
        shutil.rmtree(world.root / "out-c", ignore_errors=True)


def test_bounded_load(world):
    """Many connections, requests and datagrams at once: the daemon answers throughout and its
    peak memory stays under MEMORY_BOUND_MB."""
    for i in range(4):
        world.spawn_as(world.victim, "collector", "--socket", world.a.socket, "--job", f"load{i}", "--seconds", 40)
    world.spawn_as(world.attacker, "http-idle", "--port", world.a.port, "--connections", 300, "--seconds", 30)
    flood = [world.spawn_as(world.attacker, "beats", "--socket", world.a.socket, "--count", 20_000,
                            "--host-bytes", 100) for _ in range(2)]
    requests = 0
    while requests < 700 or any(p.poll() is None for p in flood):  # a fixed amount of work
        for path in ("/v1/status", "/v1/processes", "/v1/captures", "/v1/files", "/metrics", "/v1/telemetry"):
            status = world.api(world.a, "GET", path, timeout=30)[0]
            assert status == 200, path
            requests += 1
        status, _, _ = world.api(world.a, "POST", "/v1/trace", {"selection": {"job": "nosuchjob"}, "steps": 1})
        assert status == 404
        requests += 1
    peak = peak_rss_mb(world.a.proc.pid)
    print(f"load: {requests} requests beside 300 idle connections and 40,000 datagrams; peak RSS {peak:.0f} MB")
    assert peak < MEMORY_BOUND_MB
