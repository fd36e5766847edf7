"""One-sided epochs and collective orders from mpi4py that a third-party suite
found Tandem to hang on, for test_mpi4py.py: rank 0 prints the results, so a
run with Tandem and one without must print the same.

  - every other rank locks rank 1's window, puts and unlocks while rank 1
    waits in Comm.Barrier (passive target: rank 1's MPI library must move
    meanwhile);
  - a post/start/complete epoch whose Win.Test after two barriers sees it
    ended (the sequence of mpi4py's testStartCompletePostTest);
  - one half of the ranks Iallreduce then Barrier, the other half the
    reverse (an order the standard forbids but both MPI libraries run).
"""

from __future__ import annotations

from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
target = 1 if size > 1 else 0
lines: list[str] = []

# Passive target while the target sits in a barrier.
memory = MPI.Alloc_mem(8 * size)
window = MPI.Win.Create(memory, 8, comm=comm)
view = memory.cast("q")
window.Lock(rank)
for i in range(size):
    view[i] = 0
window.Unlock(rank)
comm.Barrier()
if rank != target or size == 1:
    value = array("q", [100 + rank])
    window.Lock(target)
    window.Put(value, target, rank)  # at displacement rank
    window.Unlock(target)
comm.Barrier()
if rank == target:
    window.Lock(rank, MPI.LOCK_SHARED)
    lines.append(f"put while in Barrier: {list(view)}")
    window.Unlock(rank)

# Post/start/complete, tested after two barriers.
if size > 1:
    group = window.Get_group()
    if rank == 0:
        peers = group.Incl([target])
        window.Start(peers)
        comm.Barrier()
        window.Complete()
        comm.Barrier()
    elif rank == target:
        peers = group.Incl([0])
        window.Post(peers)
        before = window.Test()
        comm.Barrier()
        comm.Barrier()
        after = ended = window.Test()
        while not ended:  # rather than hang where it is not so
            ended = window.Test()
        lines.append(f"Win.Test: {before} before, {after} after two barriers")
    else:
        peers = group.Incl([])
        comm.Barrier()
        comm.Barrier()
    peers.Free()
    group.Free()
window.Free()
MPI.Free_mem(memory)

# Blocking and nonblocking collectives in different orders.
for n in (4, 1 << 16):
    mine = array("i", range(rank, rank + n))
    total = array("i", [0] * n)
    if rank % 2 == 0:
        request = comm.Iallreduce(mine, total, op=MPI.SUM)
        comm.Barrier()
    else:
        comm.Barrier()
        request = comm.Iallreduce(mine, total, op=MPI.SUM)
    request.Wait()
    expected = [size * i + size * (size - 1) // 2 for i in range(n)]
    lines.append(f"Iallreduce/Barrier of {n}: {'right' if list(total) == expected else 'WRONG'}")

everyone = comm.gather(lines, root=0)
if rank == 0:
    for r, theirs in enumerate(everyone):
        for line in theirs:
            print(f"{r}: {line}")
