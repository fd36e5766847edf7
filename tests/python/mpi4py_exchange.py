"""Nonblocking point-to-point and collectives from mpi4py, for
test_mpi4py.py: rank 0 prints what every rank received (sources, tags,
counts, digests of the data), so a run with Tandem and one without must print
the same. On standard error each rank says whether Tandem is loaded."""

from __future__ import annotations

import ctypes
import hashlib
import sys
from array import array

from mpi4py import MPI

LARGE = 1 << 20  # above every eager limit: the progress thread moves these

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
left, right = (rank - 1) % size, (rank + 1) % size
lines: list[str] = []

active = getattr(ctypes.CDLL(None), "tandem_active", None)
print(f"rank {rank}: tandem active {active() if active else 0}", file=sys.stderr)


def pattern(n: int, seed: int) -> bytearray:
    start = seed % 251
    return bytearray((bytes(range(251)) * (n // 251 + 2))[start : start + n])


def digest(buffer) -> str:
    return hashlib.sha256(bytes(buffer)).hexdigest()[:12]


def compute() -> int:
    """A few milliseconds of work while the requests are outstanding."""
    return sum(i * i for i in range(20000))


def note(what: str, status: MPI.Status, buffer, datatype=MPI.BYTE) -> None:
    count = status.Get_count(datatype)
    lines.append(
        f"{what}: source {status.Get_source()} tag {status.Get_tag()} count {count} {digest(buffer)}"
    )


# Every buffer of a nonblocking call stays referenced until its completion:
# mpi4py 4.1.2's Iallreduce request holds no reference to its buffers.

# A ring of large messages, posted, computed over, then waited for together.
inbox, outbox = bytearray(LARGE), pattern(LARGE, rank)
requests = [comm.Irecv(inbox, source=left, tag=7), comm.Isend(outbox, dest=right, tag=7)]
compute()
statuses = [MPI.Status(), MPI.Status()]
MPI.Request.Waitall(requests, statuses)
note("ring", statuses[0], inbox)
assert inbox == pattern(LARGE, left)

# Wildcards: rank 0 takes one message from every other rank, any source, any
# tag, in whatever order they come (the lines are sorted).
if rank == 0:
    arrived = len(lines)
    for _ in range(size - 1):
        box = bytearray(LARGE + size)
        status = MPI.Status()
        request = comm.Irecv(box, source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG)
        compute()
        request.Wait(status)
        note("wildcard", status, box[: status.Get_count(MPI.BYTE)])
    lines[arrived:] = sorted(lines[arrived:])
else:
    outbox = pattern(LARGE + rank, 100 + rank)
    comm.Isend(outbox, dest=0, tag=20 + rank).Wait()
comm.Barrier()  # else a wildcard receive of rank 0 could take the next step's message

# Persistent requests, started three times; Test polls the last round.
box, outbox = bytearray(LARGE), pattern(LARGE, 50 + rank)
persistent = [comm.Recv_init(box, source=left, tag=9), comm.Send_init(outbox, dest=right, tag=9)]
for round_ in range(3):
    MPI.Prequest.Startall(persistent)
    compute()
    if round_ < 2:
        MPI.Request.Waitall(persistent)
    else:
        while not MPI.Request.Testall(persistent):
            pass
    lines.append(f"persistent {round_}: {digest(box)}")
for request in persistent:
    request.Free()

# A receive nobody matches, cancelled.
box = bytearray(16)
request = comm.Irecv(box, source=left, tag=99)
request.Cancel()
status = MPI.Status()
request.Wait(status)
lines.append(f"cancelled: {status.Is_cancelled()}")

# Pickled objects, large enough to travel as a large message (a receive
# without a buffer of the right size would truncate it), and a matched probe.
sent = {"rank": rank, "values": list(range(rank, rank + 200000))}
request = comm.isend(sent, dest=right, tag=11)
box = bytearray(4 * LARGE)
got = comm.irecv(box, source=left, tag=11).wait()
request.wait()
request = comm.isend(sent, dest=right, tag=12)
message = comm.mprobe(source=left, tag=12)
assert message.irecv().wait() == got
request.wait()
lines.append(f"pickled from {got['rank']}: {sum(got['values'])}")

# Several collectives in flight at once, completed in the reverse order.
bcast = pattern(LARGE, 3) if rank == size - 1 else bytearray(LARGE)
addends, summed = array("i", [rank * 7 + i for i in range(4096)]), array("i", [0] * 4096)
whole, scattered = pattern(LARGE - LARGE % size, 4) if rank == 0 else None, bytearray(LARGE // size)
mine, exchanged = pattern(size * 4096, 10 + rank), bytearray(size * 4096)
collectives = [
    comm.Ibcast(bcast, root=size - 1),
    comm.Iallreduce(addends, summed, op=MPI.SUM),
    comm.Iscatter(whole, scattered, root=0),
    comm.Ialltoall(mine, exchanged),
    comm.Ibarrier(),
]
compute()
for request in reversed(collectives):
    request.Wait()
lines.append(f"ibcast {digest(bcast)} iallreduce {sum(summed)} {digest(summed)}")
lines.append(f"iscatter {digest(scattered)} ialltoall {digest(exchanged)}")

gathered = comm.gather(lines, root=0)
if rank == 0:
    for r, rank_lines in enumerate(gathered):
        for line in rank_lines:
            print(f"{r}: {line}")
