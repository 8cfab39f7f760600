#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# A UDP sender for bench/proxy_cost.sh: N queries for www.example.com A to
# 127.0.0.1:PORT from SOURCE, in bursts of BURST (each burst's answers awaited before
# the next), each behind a PROXY v2 header carrying CLIENT when one is given (dnsperf
# cannot add one). Prints how many were answered.
# Usage: proxy_sender.py PORT SOURCE N BURST [CLIENT]
import socket
import struct
import sys

port, source, n, burst = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
client = sys.argv[5] if len(sys.argv) > 5 else None
header = b""
if client:  # PROXY, INET over DGRAM, 12 address bytes (dns/proxy_v2.hpp)
    header = (b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x21, 0x12]) + struct.pack(">H", 12) + socket.inet_aton(client) +
              socket.inet_aton("127.0.0.1") + struct.pack(">HH", 40000, port))
name = b"".join(bytes([len(l)]) + l for l in b"www.example.com".split(b".")) + b"\x00"
body = b"\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + name + b"\x00\x01\x00\x01"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((source, 0))
s.settimeout(2.0)
sent = answered = 0
while sent < n:
    k = min(burst, n - sent)
    for i in range(k):
        s.sendto(header + struct.pack(">H", (sent + i) & 0xFFFF) + body, ("127.0.0.1", port))
    sent += k
    try:
        for _ in range(k):
            s.recv(4096)
            answered += 1
    except socket.timeout:
        pass
print(answered)
