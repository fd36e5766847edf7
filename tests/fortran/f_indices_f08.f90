! The indices of MPI_Waitany, MPI_Testany, MPI_Waitsome and MPI_Testsome
! through the mpi_f08 module: the standard's, which start at 1, and
! MPI_UNDEFINED unchanged. (MPICH 4.0.2's own mpi_f08 answers with C's
! indices, one less; MPICH 4.1 fixed it. Tandem's answer the standard's.)
! Each rank asks about messages to itself; rank 0 prints what it saw.
program f_indices_f08
  use mpi_f08
  implicit none
  type(MPI_Request) :: reqs(3)
  integer :: buf(3), idx, outcount, indices(3), seen(6), failures, rank
  logical :: flag

  failures = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  ! A null request first: only the receives that a send matched complete.
  reqs(1) = MPI_REQUEST_NULL
  call MPI_Irecv(buf(2), 1, MPI_INTEGER, 0, 2, MPI_COMM_SELF, reqs(2))
  call MPI_Irecv(buf(3), 1, MPI_INTEGER, 0, 3, MPI_COMM_SELF, reqs(3))
  call MPI_Send(rank, 1, MPI_INTEGER, 0, 3, MPI_COMM_SELF)
  call MPI_Waitany(3, reqs, seen(1), MPI_STATUS_IGNORE)
  call MPI_Send(rank, 1, MPI_INTEGER, 0, 2, MPI_COMM_SELF)
  flag = .false.
  do while (.not. flag)
    call MPI_Testany(3, reqs, seen(2), flag, MPI_STATUS_IGNORE)
  end do
  call MPI_Waitany(3, reqs, idx, MPI_STATUS_IGNORE)
  seen(3) = merge(-1, idx, idx == MPI_UNDEFINED)
  call MPI_Irecv(buf(2), 1, MPI_INTEGER, 0, 5, MPI_COMM_SELF, reqs(2))
  call MPI_Irecv(buf(3), 1, MPI_INTEGER, 0, 6, MPI_COMM_SELF, reqs(3))
  call MPI_Send(rank, 1, MPI_INTEGER, 0, 6, MPI_COMM_SELF)
  call MPI_Waitsome(3, reqs, outcount, indices, MPI_STATUSES_IGNORE)
  if (outcount /= 1) failures = failures + 1
  seen(4) = indices(1)
  call MPI_Send(rank, 1, MPI_INTEGER, 0, 5, MPI_COMM_SELF)
  outcount = 0
  do while (outcount == 0)
    call MPI_Testsome(3, reqs, outcount, indices, MPI_STATUSES_IGNORE)
  end do
  seen(5) = indices(1)
  call MPI_Waitsome(3, reqs, outcount, indices, MPI_STATUSES_IGNORE)
  seen(6) = merge(-1, outcount, outcount == MPI_UNDEFINED)
  if (any(seen /= (/ 3, 2, -1, 3, 2, -1 /))) failures = failures + 1
  if (rank == 0) print '(A, 6(1X, I0))', 'indices', seen
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(A, I0)', 'failures ', failures
  call MPI_Finalize()
  if (failures /= 0) error stop 1
end program f_indices_f08
