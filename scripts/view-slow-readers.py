#!/usr/bin/env python3
"""Slow readers against `faultbench view --serve`: N clients (default 10), each with a 4 KiB
receive buffer, read a 30 MB file at about 32 KB/s for 20 s; prints the server's peak VmRSS.

    scripts/view-slow-readers.py FAULTBENCH_BINARY [N]

The file is planted in the served folder after the site is built (the server opens files per
request). docs/security.md row 10c.
"""
import os, socket, subprocess, sys, tempfile, threading, time
b = sys.argv[1]
tmp = tempfile.mkdtemp()
runs, out = os.path.join(tmp, "runs"), os.path.join(tmp, "site")
os.makedirs(runs)
p = subprocess.Popen([b, "view", runs, "--out", out, "--serve", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
line = p.stdout.readline()
addr = line.split("http://")[1].split("/")[0]
host, port = addr.split(":")
with open(os.path.join(out, "big.bin"), "wb") as f:
    f.write(os.urandom(30 * 1024 * 1024))
stop = time.time() + 20
def reader():
    s = socket.create_connection((host, int(port)))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
    while time.time() < stop:
        if not s.recv(4096): break
        time.sleep(4096 / 32768)
    s.close()
ts = [threading.Thread(target=reader) for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 10)]
[t.start() for t in ts]
peak = 0
while time.time() < stop:
    for l in open(f"/proc/{p.pid}/status"):
        if l.startswith("VmRSS:"):
            peak = max(peak, int(l.split()[1]))
    time.sleep(0.2)
[t.join() for t in ts]
p.terminate(); p.wait()
print(f"peak VmRSS {peak/1024:.1f} MiB ({b})")
