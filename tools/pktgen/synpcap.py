#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes a pcap of TCP SYNs to one VIP, each from its own client address
and port drawn at random, for syn_flood.lua (docs/benchmarking.md).

Pktgen-DPDK 23.03.0 sends a range run from a pool of 24,576 frames built
once per start, and its random-field mode never touches the frames that
normal sending takes; its pcap mode, though, loads every frame of the file
into a pool of its own and sends them in order, over and over. A file of
N SYNs from distinct tuples is a stream that comes back to a tuple only
every N frames: make N larger than the DUT's flows live times the rate.

  synpcap.py --dst-mac DUT_PORT0_MAC [--src-mac GEN_PORT0_MAC] \\
      [--count 2097152] [--net 10.20.0.0/16] [--vip 10.11.0.100] \\
      [--dport 80] [--seed 1] OUT.pcap

Frames are 60 bytes (64 on the wire with the CRC) with correct IPv4 and
TCP checksums. Needs only Python 3.
"""

import argparse
import ipaddress
import random
import struct
import sys


def mac_bytes(s):
    parts = s.split(":")
    if len(parts) != 6:
        raise argparse.ArgumentTypeError("'%s' is not a MAC address" % s)
    try:
        return bytes(int(p, 16) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a MAC address" % s)


def fold(s):
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dst-mac", type=mac_bytes, required=True)
    ap.add_argument("--src-mac", type=mac_bytes,
                    default=mac_bytes("02:00:00:00:00:01"))
    ap.add_argument("--count", type=int, default=2097152)
    ap.add_argument("--net", type=ipaddress.IPv4Network,
                    default=ipaddress.IPv4Network("10.20.0.0/16"))
    ap.add_argument("--vip", type=ipaddress.IPv4Address,
                    default=ipaddress.IPv4Address("10.11.0.100"))
    ap.add_argument("--dport", type=int, default=80)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("out")
    a = ap.parse_args()

    hosts = a.net.num_addresses - 2
    first = int(a.net.network_address) + 1
    ports = 65534 - 1024 + 1
    if a.count < 1 or a.count > hosts * ports // 2:
        sys.exit("synpcap: --count must be 1..%d for %s"
                 % (hosts * ports // 2, a.net))
    if not 1 <= a.dport <= 65535:
        sys.exit("synpcap: --dport must be 1..65535")

    rng = random.Random(a.seed)
    vip = int(a.vip)
    eth = a.dst_mac + a.src_mac + b"\x08\x00"
    # The sums of every 16-bit word that does not change from frame to
    # frame; each frame adds its source address and port (and sequence).
    ip_fixed = fold(0x4500 + 40 + 0x4000 + (64 << 8 | 6) +
                    (vip >> 16) + (vip & 0xFFFF))
    tcp_fixed = fold((vip >> 16) + (vip & 0xFFFF) + 6 + 20 +
                     a.dport + (5 << 12 | 0x02) + 65535)

    seen = set()
    with open(a.out, "wb") as f:
        # pcap file header: microsecond stamps, Ethernet, snaplen 65535.
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        rec = struct.pack("<IIII", 0, 0, 60, 60)
        n = 0
        while n < a.count:
            src = first + rng.randrange(hosts)
            sport = 1024 + rng.randrange(ports)
            key = src << 16 | sport
            if key in seen:
                continue
            seen.add(key)
            seq = rng.getrandbits(32)
            s_hi, s_lo = src >> 16, src & 0xFFFF
            ip_ck = 0xFFFF ^ fold(ip_fixed + s_hi + s_lo)
            tcp_ck = 0xFFFF ^ fold(tcp_fixed + s_hi + s_lo + sport +
                                   (seq >> 16) + (seq & 0xFFFF))
            ip = struct.pack("!BBHHHBBHII", 0x45, 0, 40, 0, 0x4000, 64, 6,
                             ip_ck, src, vip)
            tcp = struct.pack("!HHIIBBHHH", sport, a.dport, seq, 0, 5 << 4,
                              0x02, 65535, tcp_ck, 0)
            f.write(rec + eth + ip + tcp + b"\0" * 6)
            n += 1
    print("synpcap: %d SYNs to %s:%d from distinct tuples of %s in %s"
          % (a.count, a.vip, a.dport, a.net, a.out))


if __name__ == "__main__":
    main()
