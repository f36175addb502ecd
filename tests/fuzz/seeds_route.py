#!/usr/bin/python3
# Writes the route target's seeds into corpus/route/ from the real
# ClientHellos of tests/unit/dataplane/route/hellos/ (capture_hellos.py):
# each as a stream (part 0, cut short too) and as a handshake message to
# be re-recorded (part 1, records of 7 and 64 bytes).
import os

TOP = os.path.dirname(os.path.abspath(__file__))
HELLOS = os.path.join(TOP, "..", "unit", "dataplane", "route", "hellos")
D = os.path.join(TOP, "corpus", "route")


def write(name, data):
    with open(os.path.join(D, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(D, exist_ok=True)
    for f in sorted(os.listdir(HELLOS)):
        name = f[:-len(".bin")]
        with open(os.path.join(HELLOS, f), "rb") as h:
            data = h.read()
        write("tls_" + name, b"\x00" + data)
        write("tls_" + name + "_cut", b"\x00" + data[:len(data) // 2])
        for k in (7, 64):
            write("tlsmsg_%s_%d" % (name, k), bytes([1, k - 1]) + data[5:])


if __name__ == "__main__":
    main()
