#!/usr/bin/python3
# Writes the pkt target's IPv6 seed frames into corpus/pkt/ (ip6_*): one
# of each kind the IPv6 parser and rewrites meet, extension headers and
# fragments included. Plain struct packing, so that it needs nothing but
# Python (run from tests/fuzz; the files are committed).
import os
import struct
import sys

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "pkt")
MAC = bytes.fromhex("020000000002020000000001")
C = bytes.fromhex("20010db8000000000000000000000007")
V = bytes.fromhex("20010db8000100000000000000000010")
B = bytes.fromhex("20010db8000a00000000000000000011")
S = bytes.fromhex("20010db8000a00000000000000000001")
SN = bytes.fromhex("ff0200000000000000000001ff000010")  # V's solicited node
ALL = bytes.fromhex("ff020000000000000000000000000001")
LL = bytes.fromhex("fe800000000000000000000000000001")
HOPOPTS, TCP, UDP, ROUTING, FRAG, ICMP6, DSTOPTS = 0, 6, 17, 43, 44, 58, 60


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def l4(proto, src, dst, seg, coff):
    ph = src + dst + struct.pack("!I3xB", len(seg), proto)
    c = csum(ph + seg)
    if c == 0 and proto == UDP:
        c = 0xFFFF
    return seg[:coff] + struct.pack("!H", c) + seg[coff + 2:]


def tcp(src, dst, sport, dport, flags, data=b"", opts=b""):
    hl = (20 + len(opts)) // 4
    seg = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, hl << 4, flags,
                      64800, 0, 0) + opts + data
    return l4(TCP, src, dst, seg, 16)


def udp(src, dst, sport, dport, data):
    seg = struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data
    return l4(UDP, src, dst, seg, 6)


def icmp6(src, dst, typ, code, body):
    return l4(ICMP6, src, dst, struct.pack("!BBH", typ, code, 0) + body,
              2)


def ext(nh, body6):
    # An extension header of 8 bytes: next header, length 0, 6 bytes.
    return bytes([nh, 0]) + body6


PADN = b"\x01\x04\0\0\0\0"


def ip6(src, dst, nh, payload, hlim=64, exts=(), vlan=None):
    # exts: list of (type, 6-byte body); the chain ends at nh.
    chain = b""
    types = [t for t, _ in exts] + [nh]
    for i, (t, body) in enumerate(exts):
        chain += ext(types[i + 1], body)
    first = types[0]
    hdr = struct.pack("!IHBB", 6 << 28, len(chain) + len(payload), first,
                      hlim) + src + dst
    eth = MAC + (struct.pack("!HH", 0x8100, vlan) if vlan else b"")
    return eth + b"\x86\xdd" + hdr + chain + payload


http = b"GET / HTTP/1.1\r\nHost: v\r\n\r\n"
mss = b"\x02\x04\x05\xa0\x01\x03\x03\x07"
frames = {
    "ip6_tcp_syn": ip6(C, V, TCP, tcp(C, V, 40000, 80, 0x02, opts=mss)),
    "ip6_tcp_http": ip6(C, V, TCP, tcp(C, V, 40000, 80, 0x18, http)),
    "ip6_tcp_vlan": ip6(C, V, TCP, tcp(C, V, 40001, 443, 0x10), vlan=42),
    "ip6_tcp_reply": ip6(B, S, TCP, tcp(B, S, 80, 1025, 0x12)),
    "ip6_udp_dns": ip6(C, V, UDP, udp(C, V, 5353, 53, b"\x12\x34" * 6)),
    "ip6_icmp_echo": ip6(C, V, ICMP6, icmp6(C, V, 128, 0,
                                            b"\0\7\0\1ping")),
    "ip6_hbh_dst": ip6(C, V, TCP, tcp(C, V, 40002, 80, 0x02),
                       exts=[(HOPOPTS, b"\x05\x02\0\0\x01\0"),
                             (DSTOPTS, PADN)]),
    "ip6_routing_done": ip6(C, V, TCP, tcp(C, V, 40003, 80, 0x02),
                            exts=[(ROUTING, b"\x04\x00\0\0\0\0")]),
    "ip6_atomic_frag": ip6(C, V, UDP, udp(C, V, 5000, 6000, b"xyz"),
                           exts=[(FRAG, b"\0\0\x12\x34\x56\x78")]),
    "ip6_first_frag": ip6(C, V, UDP,
                          udp(C, V, 5000, 6000, b"a" * 64)[:16],
                          exts=[(FRAG, b"\0\x01\x12\x34\x56\x78")]),
    "ip6_later_frag": ip6(C, V, UDP, b"b" * 16,
                          exts=[(FRAG, b"\0\x10\x12\x34\x56\x78")]),
    "ip6_hlim1": ip6(C, V, TCP, tcp(C, V, 40004, 80, 0x10), hlim=1),
    "ip6_nd_ns": ip6(S, bytes.fromhex("ff0200000000000000000001ff000010"),
                     ICMP6,
                     icmp6(S, bytes.fromhex(
                         "ff0200000000000000000001ff000010"), 135, 0,
                         b"\0\0\0\0" + V + b"\x01\x01" + MAC[6:]),
                     hlim=255),
    "ip6_nd_na": ip6(B, S, ICMP6, icmp6(B, S, 136, 0,
                                        b"\x60\0\0\0" + B + b"\x02\x01" +
                                        MAC[6:]), hlim=255),
    "ip6_pkt_too_big": ip6(B, S, ICMP6, icmp6(B, S, 2, 0, struct.pack(
        "!I", 1400) + bytes(ip6(S, B, TCP, tcp(S, B, 1025, 80, 0x18,
                                                 http))[14:]))),
    "ip6_padded": ip6(C, V, UDP, udp(C, V, 7, 9, b"")) + b"\0" * 6,
    # Extension header chains: the longest valid one (every kind, each
    # where it may stand), one header too many, an unknown header, a
    # hop-by-hop header out of place, an option to discard, a routing
    # header still to be followed, a chain cut short.
    "ip6_ext_chain_full": ip6(C, V, TCP, tcp(C, V, 40005, 80, 0x02,
                                             opts=mss),
                              exts=[(HOPOPTS, PADN), (DSTOPTS, PADN),
                                    (ROUTING, b"\x04\x00\0\0\0\0"),
                                    (FRAG, b"\0\0\x00\x00\x0a\x0b"),
                                    (DSTOPTS, PADN)]),
    "ip6_ext_too_many": ip6(C, V, TCP, tcp(C, V, 40006, 80, 0x02),
                            exts=[(DSTOPTS, PADN)] * 9),
    "ip6_ext_unknown": ip6(C, V, 253, b"\0" * 16),
    "ip6_ext_hbh_late": ip6(C, V, TCP, tcp(C, V, 40007, 80, 0x02),
                            exts=[(DSTOPTS, PADN), (HOPOPTS, PADN)]),
    "ip6_ext_jumbo": ip6(C, V, UDP, udp(C, V, 5000, 53, b"j"),
                         exts=[(HOPOPTS, b"\xc2\x04\0\0\x01\0")]),
    "ip6_routing_left": ip6(C, V, TCP, tcp(C, V, 40008, 80, 0x02),
                            exts=[(ROUTING, b"\x04\x01\0\0\0\0")]),
    "ip6_ext_cut": (lambda f: f[:18] + struct.pack("!H", 4) +
                    f[20:14 + 40 + 4])(ip6(C, V, TCP, b"",
                                           exts=[(DSTOPTS, PADN)])),
    "ip6_plen_long": (lambda f: f[:18] + struct.pack("!H", 400) + f[20:])(
        ip6(C, V, TCP, tcp(C, V, 40009, 80, 0x02))),
    # Fragments: the first of a SYN with its whole TCP header (and a
    # fragmentable part of whole 8-byte units, as one with more must).
    "ip6_frag_syn_first": ip6(C, V, TCP, tcp(C, V, 40010, 80, 0x02,
                                             b"abcd", opts=mss),
                              exts=[(FRAG, b"\0\x01\0\0\x0b\x0c")]),
    # Neighbour discovery: a duplicate address check, an unsolicited
    # advertisement to all nodes, a solicitation in a fragment (refused),
    # a router advertisement from a link-local router.
    "ip6_nd_ns_dad": ip6(bytes(16), SN, ICMP6,
                         icmp6(bytes(16), SN, 135, 0, b"\0\0\0\0" + V),
                         hlim=255),
    "ip6_nd_na_unsolicited": ip6(B, ALL, ICMP6,
                                 icmp6(B, ALL, 136, 0, b"\x20\0\0\0" + B +
                                       b"\x02\x01" + MAC[6:]),
                                 hlim=255),
    "ip6_nd_ns_frag": ip6(S, SN, ICMP6,
                          icmp6(S, SN, 135, 0, b"\0\0\0\0" + V +
                                b"\x01\x01" + MAC[6:]),
                          hlim=255,
                          exts=[(FRAG, b"\0\0\0\0\x0d\x0e")]),
    "ip6_nd_ra": ip6(LL, ALL, ICMP6,
                     icmp6(LL, ALL, 134, 0, b"\x40\x00\x07\x08" +
                           b"\0" * 8 + b"\x01\x01" + MAC[6:]),
                     hlim=255),
    # ICMPv6 errors about a flow besides packet too big, one quoting
    # too little, and the messages not answered (a reply, an echo with
    # an extension header).
    "ip6_icmp_unreach_udp": ip6(B, S, ICMP6, icmp6(B, S, 1, 4, b"\0" * 4 +
                                                   bytes(ip6(S, B, UDP,
                                                             udp(S, B, 1026,
                                                                 53, b"q"))
                                                         [14:]))),
    "ip6_icmp_time_exceeded": ip6(B, S, ICMP6, icmp6(B, S, 3, 0, b"\0" * 4 +
                                                     bytes(ip6(S, B, TCP,
                                                               tcp(S, B, 1027,
                                                                   80, 0x10))
                                                           [14:]))),
    "ip6_pkt_too_big_short": ip6(B, S, ICMP6, icmp6(B, S, 2, 0, struct.pack(
        "!I", 1280) + bytes(ip6(S, B, TCP, tcp(S, B, 1025, 80, 0x18))
                            [14:14 + 44]))),
    "ip6_echo_reply": ip6(C, V, ICMP6, icmp6(C, V, 129, 0, b"\0\7\0\2pong")),
    "ip6_echo_hbh": ip6(C, V, ICMP6, icmp6(C, V, 128, 0, b"\0\7\0\3ping"),
                        exts=[(HOPOPTS, PADN)]),
}
os.makedirs(D, exist_ok=True)
for name, f in frames.items():
    with open(os.path.join(D, name), "wb") as out:
        out.write(f)
sys.exit(0)
