#!/usr/bin/env python3
"""remote_fixture.py CCKEY_CLI DIR -- COMMAND...: runs COMMAND while a real
redis-server and a real nginx WebDAV (tests/remote/servers.py, on free
ports) hold entries that another process (the cckey command: `cache put`,
`export`, then `import --remote URL`) put only there, so a binding's test
can read them through a folder whose cckey.conf names the remote.

It writes DIR/cases.tsv, one line per remote: FOLDER<TAB>KEY<TAB>PAYLOAD_FILE,
where FOLDER is an empty store whose cckey.conf has `remote = URL`, and
exports CCKEY_TEST_REMOTE_DIR=DIR to COMMAND. A server that is not
installed leaves its line out (said on stderr). The servers are stopped
when COMMAND ends; its exit status is this script's."""
import hashlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "remote"))
import servers  # noqa: E402


def cli(cli_path, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCKEY_")}
    p = subprocess.run([cli_path, *args], capture_output=True, env=env, timeout=120)
    if p.returncode:
        sys.exit(f"remote_fixture: cckey {' '.join(args)}: {p.stderr.decode()}")
    return p.stdout


def put_remote(cli_path, work, url, name):
    """One entry on url only; returns its key and the file of its payload."""
    payload = os.path.join(work, name + ".payload")
    with open(payload, "wb") as f:
        f.write(hashlib.sha256(name.encode()).digest() * 500)
    key = cli(cli_path, "key", "--device", "dev", "--name", name, "--source", "src " + name).decode().strip()
    w1, w2, bundle = (os.path.join(work, name + s) for s in (".w1", ".w2", ".bundle"))
    cli(cli_path, "cache", "put", key, payload, "--cache-dir", w1)
    cli(cli_path, "cache", "export", "-o", bundle, "--cache-dir", w1)
    cli(cli_path, "cache", "import", bundle, "--cache-dir", w2, "--remote", url)
    for p in (w1, w2, bundle):
        shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else os.remove(p)
    return key, payload


def main():
    cli_path, work, cmd = sys.argv[1], sys.argv[2], sys.argv[4:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    started, cases = [], []
    try:
        for kind, binary in (("redis", "redis-server"), ("webdav", "nginx")):
            if not servers.have(binary):
                print(f"remote_fixture: no {binary}: no {kind} case", file=sys.stderr)
                continue
            server = servers.Redis(work) if kind == "redis" else servers.Nginx(os.path.join(work, "nginx"))
            started.append(server)
            key, payload = put_remote(cli_path, work, server.url(), kind)
            folder = os.path.join(work, kind + ".reader")
            os.makedirs(folder)
            with open(os.path.join(folder, "cckey.conf"), "w") as f:
                f.write(f"remote = {server.url()}\n")
            cases.append(f"{folder}\t{key}\t{payload}\n")
        with open(os.path.join(work, "cases.tsv"), "w") as f:
            f.writelines(cases)
        return subprocess.run(cmd, env=dict(os.environ, CCKEY_TEST_REMOTE_DIR=work)).returncode
    finally:
        for server in started:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
