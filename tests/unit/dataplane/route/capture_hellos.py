#!/usr/bin/python3
# Writes hellos/NAME.bin: the first bytes real TLS clients send (openssl
# s_client, curl) to a listener on the loopback that answers nothing, so
# that each file holds exactly one ClientHello in its records. The unit
# test tls_sni reads them (each with the name it must find) and
# tests/fuzz/seeds_route.py makes the fuzz seeds from them.
import os
import socket
import subprocess
import time

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hellos")

# name -> the client's command; {port} is the listener's.
CLIENTS = {
    "openssl_tls13": ["openssl", "s_client", "-connect", "127.0.0.1:{port}",
                      "-servername", "Api.Example.COM"],
    "openssl_tls12": ["openssl", "s_client", "-connect", "127.0.0.1:{port}",
                      "-tls1_2", "-servername", "www.example.org"],
    "openssl_no_sni": ["openssl", "s_client", "-connect",
                       "127.0.0.1:{port}", "-noservername"],
    # Every cipher suite and five groups: a longer hello, more shares.
    "openssl_many": ["openssl", "s_client", "-connect", "127.0.0.1:{port}",
                     "-servername", "many.example.com", "-cipher",
                     "ALL:@SECLEVEL=0", "-curves",
                     "X25519:P-256:P-384:P-521:X448"],
    "curl": ["curl", "-sk", "--max-time", "3", "--resolve",
             "static.example.net:{port}:127.0.0.1",
             "https://static.example.net:{port}/"],
}


def capture(cmd):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    proc = subprocess.Popen([a.format(port=port) for a in cmd],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    conn, _ = srv.accept()
    conn.settimeout(1.0)
    data = b""
    # The client waits for the server's answer once its hello is out.
    while True:
        try:
            b = conn.recv(65536)
        except socket.timeout:
            break
        if not b:
            break
        data += b
    conn.close()
    srv.close()
    proc.kill()
    proc.wait()
    return data


def main():
    os.makedirs(D, exist_ok=True)
    for name, cmd in CLIENTS.items():
        data = capture(cmd)
        with open(os.path.join(D, name + ".bin"), "wb") as f:
            f.write(data)
        print(name, len(data))
        time.sleep(0.1)


if __name__ == "__main__":
    main()
