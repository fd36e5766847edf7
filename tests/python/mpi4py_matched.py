"""Point-to-point traffic from mpi4py whose receives go through matched probes,
for test_monitor.py: what mpi4py's pickled receives and its pkl5 helpers
(pickle protocol 5, out-of-band buffers) do, on MPI_COMM_WORLD and on a
communicator whose ranks run backwards, with a wildcard source and
MPI_PROC_NULL. Every message sent is received: the job file's receive matrix
must be the transposed send matrix."""

from __future__ import annotations

import numpy as np
from mpi4py import MPI
from mpi4py.util import pkl5

LARGE = 1 << 20  # above every eager limit

world = MPI.COMM_WORLD
reversed_ = world.Split(0, world.Get_size() - world.Get_rank())


def exchange(comm: MPI.Intracomm, step: int) -> None:
    rank, size = comm.Get_rank(), comm.Get_size()
    left, right = (rank - 1) % size, (rank + 1) % size
    sent = {"rank": rank, "data": bytes(LARGE + step)}

    # comm.recv without a buffer: MPI_Mprobe, then MPI_Mrecv of the pickle.
    request = comm.isend(sent, dest=right, tag=1)
    assert comm.recv(source=left, tag=1)["rank"] == left
    request.wait()

    # A matched probe, then a nonblocking matched receive (MPI_Imrecv).
    request = comm.isend(sent, dest=right, tag=2)
    assert comm.mprobe(source=MPI.ANY_SOURCE, tag=2).irecv().wait()["rank"] == left
    request.wait()

    # MPI_Improbe until the message is there, then MPI_Mrecv.
    request = comm.isend(sent, dest=right, tag=3)
    message = None
    while message is None:
        message = comm.improbe(source=left, tag=3)
    assert message.recv()["rank"] == left
    request.wait()

    # pkl5: a header, the pickle and each out-of-band buffer (the two large
    # arrays) are messages of their own, each probed and received with
    # matched probes; MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC.
    pcomm = pkl5.Intracomm(comm)
    payload = [rank, np.full(LARGE + step, rank, np.uint8), np.zeros(LARGE // 8), bytes(1000)]
    request = pcomm.isend(payload, dest=right, tag=4)
    assert pcomm.mprobe(source=left, tag=4).recv()[0] == left
    request.wait()
    request = pcomm.isend(payload, dest=right, tag=5)
    message = None
    while message is None:
        message = pcomm.improbe(source=left, tag=5)
    assert message.irecv().wait()[0] == left
    request.wait()
    pcomm.send(payload, dest=MPI.PROC_NULL, tag=6)
    assert pcomm.mprobe(source=MPI.PROC_NULL, tag=6).recv() is None


exchange(world, 0)
exchange(reversed_, 1)
reversed_.Free()
if world.Get_rank() == 0:
    print("mpi4py_matched: done")
