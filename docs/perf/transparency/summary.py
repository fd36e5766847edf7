"""Medians over the rounds of ab.sh's lines, before and after, per MPI, ranks,
call and size, with the spread (lowest-highest of the rounds) of each."""

import json
import statistics
import sys
from collections import defaultdict

cells = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("test") == "coll_seed":
        for mode in ("block_s", "nbc_s"):
            key = (r["mpi"], r["ranks"], f"{r['collective']} {mode[:-2]}", r["bytes"])
            cells[key, r["library"]].append(r[mode])
    else:
        cells[(r["mpi"], r["ranks"], r["call"], 8), r["library"]].append(r["median_s"])
print("| MPI | ranks | call | bytes | before (us) | after (us) | after/before | spread before | spread after |")
print("|---|---|---|---|---|---|---|---|---|")
for key in sorted({k for k, _ in cells}):
    b, a = cells[key, "before"], cells[key, "after"]
    mb, ma = statistics.median(b), statistics.median(a)
    print(
        f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {1e6 * mb:.2f} | {1e6 * ma:.2f} | "
        f"{ma / mb:.2f} | {1e6 * min(b):.2f}-{1e6 * max(b):.2f} | {1e6 * min(a):.2f}-{1e6 * max(a):.2f} |"
    )
