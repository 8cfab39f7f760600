#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# A trivial UDP upstream for the bench scripts (dnstap_cost.sh, policy_reload.sh): every
# query is answered NOERROR with its question and one A record 192.0.2.1, TTL 3600, so a
# resolver in front of it caches every name after one miss; an AAAA query gets one AAAA
# record 2001:db8::1 for a name whose first label starts with "v6", else NODATA (an SOA
# owned by the name, TTL and MINIMUM 3600: cached too), which DNS64 synthesizes from the
# A (dns64_hit_instructions.sh).
# Usage: answer_a_upstream.py PORT   (listens on 127.0.0.1:PORT until killed)
import socket
import struct
import sys

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
while True:
    q, a = s.recvfrom(4096)
    end = 12
    while q[end] != 0:
        end += q[end] + 1
    end += 5
    if q[end - 4:end - 2] == b"\x00\x1c" and q[13:15].lower() == b"v6":  # AAAA
        rr = b"\xc0\x0c\x00\x1c\x00\x01" + struct.pack(">IH", 3600, 16) + bytes([0x20, 1, 0xd, 0xb8] + [0] * 11 + [1])
        s.sendto(q[:2] + b"\x84\x00\x00\x01\x00\x01\x00\x00\x00\x00" + q[12:end] + rr, a)
        continue
    if q[end - 4:end - 2] == b"\x00\x1c":  # AAAA
        soa = b"\x00\x00" + struct.pack(">IIIII", 1, 3600, 600, 86400, 3600)
        rr = b"\xc0\x0c\x00\x06\x00\x01" + struct.pack(">IH", 3600, len(soa)) + soa
        s.sendto(q[:2] + b"\x84\x00\x00\x01\x00\x00\x00\x01\x00\x00" + q[12:end] + rr, a)
        continue
    rr = b"\xc0\x0c\x00\x01\x00\x01" + struct.pack(">IH", 3600, 4) + bytes([192, 0, 2, 1])
    s.sendto(q[:2] + b"\x84\x00\x00\x01\x00\x01\x00\x00\x00\x00" + q[12:end] + rr, a)
