#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""sd_notify without systemd: serve talks to $NOTIFY_SOCKET as it would to systemd.

A datagram socket of our own stands in for the service manager: serve must send
READY=1 once it serves, WATCHDOG=1 every WATCHDOG_USEC/2, RELOADING=1 then READY=1
around a SIGHUP reload, and STOPPING=1 on SIGTERM. Exit 77 (skipped) when the build
has no libsystemd (HAVE_SYSTEMD=0), since it then sends nothing by design."""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

if os.environ.get("HAVE_SYSTEMD") != "1":
    print("SKIPPED: built without libsystemd (service_notify.cpp sends nothing)")
    sys.exit(77)

tmp = tempfile.mkdtemp(prefix="dnsarena-notify-")
path = os.path.join(tmp, "notify")
manager = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
manager.bind(path)
manager.settimeout(10)
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
config = os.path.join(tmp, "serve.yaml")
with open(config, "w") as f:
    f.write("upstreams: [127.0.0.1:9]\n")
segment = f"dnsarena-notify-test-{os.getpid()}"
env = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="400000")
log = open(os.path.join(tmp, "serve.log"), "w")
serve = subprocess.Popen([os.environ["DNSARENA"], "serve", "--config", config, "--listen", f"127.0.0.1:{port}",
                          "--workers", "1", "--segment", segment, "--max-entries", "1000", "--arena-bytes", "4M",
                          "--no-metrics", "--remove-segment"], env=env, stderr=log, stdout=log)


def fail(why):
    serve.kill()
    print("FAILED:", why)
    print(open(os.path.join(tmp, "serve.log")).read())
    sys.exit(1)


def receive_until(wanted, seconds=10):
    """Messages received until one containing `wanted`; fails after `seconds`."""
    got = []
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            msg = manager.recv(4096).decode()
        except socket.timeout:
            break
        got.append(msg)
        if wanted in msg:
            return got
    fail(f"no {wanted!r} within {seconds} s; received {got}")


first = receive_until("READY=1")
print("ready:", first[-1].replace("\n", " | "))
start = time.time()
pings = [m for m in receive_until("WATCHDOG=1") if "WATCHDOG=1" in m]
while time.time() - start < 1.0:
    pings += [m for m in receive_until("WATCHDOG=1") if "WATCHDOG=1" in m]
print(f"{len(pings)} watchdog pings in {time.time() - start:.2f} s")
if len(pings) < 3:
    fail("fewer than 3 watchdog pings in 1 s with WATCHDOG_USEC=400000")
serve.send_signal(signal.SIGHUP)
reload = receive_until("RELOADING=1")
after = receive_until("READY=1")
print("reload:", [m.split("\n")[0] for m in reload + after if "WATCHDOG" not in m])
serve.send_signal(signal.SIGTERM)
receive_until("STOPPING=1")
if serve.wait(timeout=15) != 0:
    fail(f"serve exited with {serve.returncode}")
print("READY, WATCHDOG, RELOADING, READY, STOPPING as systemd expects")
