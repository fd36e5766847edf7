"""Turns of the progress thread during each overlapped trial of
bench/coll_overlap.c, from the event log that nap-and-trace.patch writes
(/tmp/dbgev.RANK, at MPI_Finalize) and the bench's DBGT lines on standard
input. The logs are read once the input ends, after the run."""

import sys

trials = [line for line in sys.stdin if line.startswith("DBGT")]
logs = {}
for line in trials:
    _, rank, _, post, _, computes, _, waits, _, ends = line.split()
    post, computes, waits, ends = map(float, (post, computes, waits, ends))
    if rank not in logs:
        with open(f"/tmp/dbgev.{rank}") as f:
            logs[rank] = [(float(t), c) for t, c in (row.split() for row in f)]
    events = [(t, c) for t, c in logs[rank] if post <= t <= ends]
    turns = [t for t, c in events if c == "Y" and t < waits]
    gaps = [(b - a) * 1e6 for a, b in zip([post, *turns], [*turns, waits])]
    done = [t for t, c in events if c == "D"]
    print(
        f"rank {rank}: computation {(waits - computes) * 1e6:5.0f} us, "
        f"thread turns in it {len(turns):3d}, longest gap {max(gaps):5.0f} us, "
        f"schedule done by the thread at "
        f"{'+%.0f us' % ((done[0] - post) * 1e6) if done else '-'}, "
        f"wait after the computation {(ends - waits) * 1e6:5.0f} us"
    )
