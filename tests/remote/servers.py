"""Real servers for the remote-cache tests: redis-server and nginx (WebDAV),
each on a free loopback port with a config written into a scratch folder,
stopped (and waited for) afterwards. Only 127.0.0.1 is ever used."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what):
    for _ in range(200):
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port}")


class Redis:
    """redis-server on a free port, no persistence."""

    def __init__(self, folder, password=None):
        self.port = free_port()
        args = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                "--appendonly", "no", "--dir", folder, "--protected-mode", "no"]
        if password:
            args += ["--requirepass", password]
        self.password = password
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, self.proc, "redis-server")

    def url(self, extra=""):
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}{extra}"

    def cli(self, *args):
        cmd = ["redis-cli", "-h", "127.0.0.1", "-p", str(self.port)]
        if self.password:
            cmd += ["--no-auth-warning", "-a", self.password]
        return subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=30).stdout.strip()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
        self.proc.wait()


NGINX_CONF = """daemon off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log;
{user}
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {d}/tmp;
  proxy_temp_path {d}/tmp;
  fastcgi_temp_path {d}/tmp;
  uwsgi_temp_path {d}/tmp;
  scgi_temp_path {d}/tmp;
  server {{
    listen 127.0.0.1:{port};
    location /cache/ {{
      root {d}/dav;
      dav_methods PUT DELETE;
      create_full_put_path on;
      client_max_body_size 0;
    }}
    location /basic/ {{
      root {d}/dav;
      dav_methods PUT;
      create_full_put_path on;
      client_max_body_size 0;
      auth_basic "cckey";
      auth_basic_user_file {d}/htpasswd;
    }}
    location /bearer/ {{
      if ($http_authorization != "Bearer s3cret") {{ return 401; }}
      root {d}/dav;
      dav_methods PUT;
      create_full_put_path on;
      client_max_body_size 0;
    }}
    location /err/ {{ return 500; }}
  }}
}}
"""


class Nginx:
    """nginx with WebDAV PUT under /cache/, basic auth under /basic/
    (cckey:pw), a bearer token under /bearer/ (s3cret), 500s under /err/."""

    def __init__(self, folder):
        self.dir = folder
        for sub in ("tmp", "dav/cache", "dav/basic", "dav/bearer"):
            os.makedirs(os.path.join(folder, sub), exist_ok=True)
        with open(os.path.join(folder, "htpasswd"), "w") as f:
            f.write("cckey:{PLAIN}pw\n")
        self.port = free_port()
        user = "user root;" if os.geteuid() == 0 else ""
        with open(os.path.join(folder, "nginx.conf"), "w") as f:
            f.write(NGINX_CONF.format(d=folder, port=self.port, user=user))
        exe = shutil.which("nginx") or "/usr/sbin/nginx"
        self.proc = subprocess.Popen([exe, "-p", folder, "-e", os.path.join(folder, "error.log"), "-c", os.path.join(folder, "nginx.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, self.proc, "nginx")

    def url(self, path="cache", auth=""):
        return f"http://{auth}127.0.0.1:{self.port}/{path}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.wait()


class Silent:
    """A TCP server that accepts connections and never answers: a hung
    remote."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.stopped = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
                self.conns.append(c)
            except OSError:
                return

    def stop(self):
        self.stopped = True
        self.sock.close()
        for c in self.conns:
            c.close()


def have(binary):
    return shutil.which(binary) is not None or os.path.exists(f"/usr/sbin/{binary}")


def skip_unless(*needs):
    """A test program's skip (exit 77) with a one-line reason: the reason of
    the first (ok, reason) pair that is not ok."""
    for ok, reason in needs:
        if not ok:
            print("skipped: " + reason)
            sys.exit(77)
