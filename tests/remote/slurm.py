"""A real single-node Slurm for the tests: munged with a key of its own,
slurmctld and slurmd (Debian's slurm-wlm) on free loopback ports, every
file (config, state, spool, logs, sockets) in one scratch folder, the
daemons run in the foreground and stopped by their pids afterwards.

Clients (sbatch, sinfo) reach it through SLURM_CONF, set by env()."""
import os
import pwd
import socket
import subprocess
import time

from servers import free_port

BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo")

SLURM_CONF = """ClusterName=cckeytest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
AuthInfo=socket={d}/run/munge.sock
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=cckeynode NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=cckey Nodes=cckeynode Default=YES MaxTime=INFINITE State=UP
"""


def missing():
    """The first Slurm or munge binary not on PATH, or None."""
    for b in BINARIES:
        if not any(os.access(os.path.join(p, b), os.X_OK) for p in os.environ.get("PATH", "").split(os.pathsep)):
            return b
    return None


class Slurm:
    """munged + slurmctld + slurmd, up and with the node idle on return."""

    def __init__(self, folder):
        self.d = folder
        os.mkdir(folder)
        os.chmod(folder, 0o755)   # munged wants every folder above its socket searchable by all
        for sub, mode in (("key", 0o700), ("run", 0o755), ("state", 0o700), ("spool", 0o755), ("log", 0o755)):
            os.mkdir(os.path.join(folder, sub), mode)
        key = os.path.join(folder, "key", "munge.key")
        with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(os.urandom(1024))
        self.conf = os.path.join(folder, "slurm.conf")
        ports = free_port(), free_port()
        with open(self.conf, "w") as f:
            f.write(SLURM_CONF.format(host=socket.gethostname().split(".")[0], ctld_port=ports[0],
                                      slurmd_port=ports[1], d=folder, cpus=os.cpu_count() or 1,
                                      user=_user()))
        self.procs = []
        k = os.path.join(folder, "key")
        self._start(["munged", "-F", "--key-file", key, "--socket", os.path.join(folder, "run", "munge.sock"),
                     "--pid-file", os.path.join(folder, "run", "munged.pid"),
                     "--log-file", os.path.join(k, "munged.log"), "--seed-file", os.path.join(k, "munged.seed")])
        self._wait(lambda: os.path.exists(os.path.join(folder, "run", "munge.sock")), "munged")
        self._start(["slurmctld", "-D", "-i"])
        self._start(["slurmd", "-D", "-N", "cckeynode"])
        self._wait(self._idle, "slurmd (node cckeynode idle)")

    def env(self, extra=None):
        e = dict(os.environ)
        e["SLURM_CONF"] = self.conf
        e.update(extra or {})
        return e

    def _start(self, args):
        log = open(os.path.join(self.d, "log", args[0] + ".out"), "wb")
        self.procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=self.env()))
        log.close()

    def _idle(self):
        p = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], capture_output=True, text=True, env=self.env(),
                           timeout=30)
        return p.returncode == 0 and p.stdout.strip() == "idle"

    def _wait(self, ready, what):
        """Poll until ready() (a daemon starting up); a daemon that exits
        fails at once with its log."""
        for _ in range(600):
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                self.stop()
                raise RuntimeError(f"{dead[0].args[0]} exited with {dead[0].returncode}: {self.log(dead[0].args[0])}")
            if ready():
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{what} was not up: {self.log('slurmctld')} {self.log('slurmd')}")

    def log(self, name):
        try:
            with open(os.path.join(self.d, "log", name + ".out"), errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def stop(self):
        """Daemons in reverse order: slurmd (with its job steps), slurmctld, munged."""
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []


def _user():
    return pwd.getpwuid(os.getuid()).pw_name
