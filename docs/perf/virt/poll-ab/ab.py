"""A/B of two builds of libtandem-virt on the virtual stencil, 2 simulated
hosts of 1 core over a 1 Gbit/s link (as `tandem bench virt`), interleaved
round by round: the build's own library against an older copy that the
ranks load first (LD_LIBRARY_PATH beats the programs' RUNPATH).

  python3 ab.py OLD_LIB_DIR ROUNDS OUT.json    (root: simulated hosts)
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "python"))

from tandem.builds import load_build  # noqa: E402
from tandem.hosts import Hosts  # noqa: E402
from tandem.launch import launcher_environment  # noqa: E402

old_dir, rounds, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
build = load_build(ROOT / "build" / "openmpi")
words = [
    "--grid",
    "8192,128",
    "--kmax",
    "4",
    "--halo",
    "2",
    "--steps",
    "10",
    "--trials",
    "5",
    "--cores",
    "2",
]
program = [str(build.directory / "tandem-bench-virt-stencil"), *words]
records = []
with Hosts(2, "1gbit") as net:
    for r in range(rounds):
        for lib in ("old", "new"):
            for v in (1, 2, 4, 8):
                for exchange in ("blocking", "nonblocking"):
                    env = {"TANDEM_VIRT_RANKS": str(v), "TANDEM_VIRT_CORES": "1"}
                    if lib == "old":
                        env["LD_LIBRARY_PATH"] = old_dir
                    command = net.launch_command(
                        build, 2, program + ["--exchange", exchange], False, env, cores_each=1
                    )
                    done = subprocess.run(
                        command,
                        env=launcher_environment(build),
                        capture_output=True,
                        text=True,
                        timeout=120,
                        check=False,
                    )
                    line = [x for x in done.stdout.splitlines() if x.startswith("{")]
                    record = {
                        "round": r,
                        "lib": lib,
                        "v": v,
                        "exchange": exchange,
                        "load": os.getloadavg()[0],
                        "exit": done.returncode,
                    }
                    if line:
                        record.update(json.loads(line[-1]))
                    records.append(record)
                    print(json.dumps(record)[:200], flush=True)
out.write_text("\n".join(json.dumps(x) for x in records) + "\n")
