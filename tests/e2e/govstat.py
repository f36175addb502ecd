#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What a govload.py run saw, for the admission tests.

  govstat.py window FILE FROM TO PRIO EXPECT_MS
      requests of priority PRIO sent between the wall-clock times FROM and
      TO: JSON {n, ok, refused, failed, refused_share, met_share}, where
      met_share is the share of the answered (200) ones within EXPECT_MS.
  govstat.py refused FILE
      the targets of the refused requests (503, 429), one per line.
  govstat.py count FILE STATUS
      how many requests got STATUS.
  govstat.py span FILE
      seconds from the first request sent to the last one.
"""

import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def window(d, t_from, t_to, prio, expect):
    t0 = d["start"]
    sel = [r for r in d["records"]
           if r[1] == prio and t_from <= t0 + r[0] < t_to]
    ok = [r for r in sel if r[2] == 200]
    ref = [r for r in sel if r[2] in (429, 503)]
    met = [r for r in ok if r[3] <= expect]
    n = len(sel)
    return {
        "n": n,
        "ok": len(ok),
        "refused": len(ref),
        "failed": n - len(ok) - len(ref),
        "refused_share": round(len(ref) / n, 4) if n else 0.0,
        "met_share": round(len(met) / len(ok), 4) if ok else 0.0,
    }


def main(argv):
    if len(argv) == 7 and argv[1] == "window":
        print(json.dumps(window(load(argv[2]), float(argv[3]),
                                float(argv[4]), argv[5], float(argv[6]))))
    elif len(argv) == 3 and argv[1] == "refused":
        for r in load(argv[2])["records"]:
            if r[2] in (429, 503):
                print(r[4])
    elif len(argv) == 4 and argv[1] == "count":
        print(sum(1 for r in load(argv[2])["records"]
                  if r[2] == int(argv[3])))
    elif len(argv) == 3 and argv[1] == "span":
        sent = [r[0] for r in load(argv[2])["records"]]
        print("%.3f" % (max(sent) - min(sent) if sent else 0.0))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
