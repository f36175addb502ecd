#!/usr/bin/python3
# Writes the pkt target's seed frames into corpus/pkt/: one of each kind
# the worker meets (run from tests/fuzz; the files are committed).
import os
import sys

from scapy.all import ARP, Dot1Q, Ether, ICMP, IP, Raw, TCP, UDP

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "pkt")
E = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
C, V, B = "198.51.100.7", "192.0.2.10", "10.1.0.11"
http = b"GET / HTTP/1.1\r\nHost: v\r\n\r\n"
frames = {
    "tcp_syn": E / IP(src=C, dst=V) / TCP(sport=40000, dport=80, flags="S",
                                          options=[("MSS", 1460),
                                                   ("WScale", 7)]),
    "tcp_http": E / IP(src=C, dst=V) / TCP(sport=40000, dport=80,
                                           flags="PA", seq=1, ack=1) / http,
    "tcp_fin": E / IP(src=B, dst=V) / TCP(sport=80, dport=1025, flags="FA"),
    "tcp_rst": E / IP(src=C, dst=V) / TCP(sport=40000, dport=80, flags="R"),
    "tcp_vlan": E / Dot1Q(vlan=42) / IP(src=C, dst=V) /
    TCP(sport=40001, dport=443, flags="A"),
    "ip_options": E / IP(src=C, dst=V, options=b"\x01\x01\x01\x00") /
    TCP(sport=40002, dport=80, flags="S"),
    "udp_dns": E / IP(src=C, dst=V) / UDP(sport=5353, dport=53) /
    Raw(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"),
    "udp_nocsum": E / IP(src=C, dst=V) / UDP(sport=5000, dport=6000,
                                             chksum=0) / b"x",
    "icmp_echo": E / IP(src=C, dst=V) / ICMP(type=8, id=7, seq=1) / b"ping",
    "icmp_unreach_tcp": E / IP(src=B, dst="10.1.0.1") /
    ICMP(type=3, code=4, nexthopmtu=1400) /
    IP(src="10.1.0.1", dst=B) / TCP(sport=1025, dport=80, flags="PA") /
    http,
    "icmp_ttl_udp": E / IP(src="10.9.9.9", dst=V) / ICMP(type=11) /
    IP(src=V, dst=C, ttl=1) / UDP(sport=53, dport=5353) / b"abcd",
    "arp_request": Ether(src="02:00:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") /
    ARP(op=1, hwsrc="02:00:00:00:00:01", psrc=C, pdst=V),
    "arp_reply": E / ARP(op=2, hwsrc="02:00:00:00:00:01", psrc=B, pdst=V,
                         hwdst="02:00:00:00:00:02"),
    "ip_frag": E / IP(src=C, dst=V, flags="MF") / TCP(sport=1, dport=2),
}
os.makedirs(D, exist_ok=True)
for name, f in frames.items():
    with open(os.path.join(D, name), "wb") as out:
        out.write(bytes(f))
sys.exit(0)
