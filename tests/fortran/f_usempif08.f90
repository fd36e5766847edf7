! The program of body.inc (f_mpifh.f90, f_usempi.f90) through the mpi_f08
! module: handles of TYPE(MPI_Comm) and the others, statuses of
! TYPE(MPI_Status), IERROR left out of some calls (it is optional there), and
! array sections as choice buffers, which MPICH's mpi_f08 passes as array
! descriptors (MPI_SUBARRAYS_SUPPORTED) and Open MPI's as the addresses of
! copies. Every rank records integers in 'summary'; rank 0 prints all of
! them, so the output can be compared between a run with and a run without
! Tandem.
program f_usempif08
  use mpi_f08
  implicit none
  integer, parameter :: n = 5000, nsum = 48
  integer :: ierr, rank, nprocs, right, left, i, k, idx, outcount, cnt, provided, level, base
  integer :: sbuf(n), rbuf(n, 4), indices(8), done, failures, allfail, counts(64), displs(64)
  integer :: summary(nsum), slot, grid(6, 8), strided(64)
  type(MPI_Request) :: reqs(8), preq(2)
  type(MPI_Status) :: stats(8), st
  type(MPI_File) :: fh
  type(MPI_Win) :: win
  type(MPI_Datatype) :: types(64)
  integer, allocatable :: everything(:, :), wsend(:), wrecv(:)
  integer(kind=MPI_OFFSET_KIND) :: offset
  integer(kind=MPI_ADDRESS_KIND) :: winsize, disp
  logical :: flag, is_main
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: libname
  integer :: wmem(n)

  failures = 0
  slot = 0
  summary = 0
  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call MPI_Query_thread(level)
  call MPI_Is_thread_main(is_main, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call record(provided)
  call record(level)
  if (.not. is_main) failures = failures + 1
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  do i = 1, n
    sbuf(i) = rank * n + i
  end do

  ! Isend / Irecv of four sizes, Waitall with statuses.
  do k = 1, 4
    call MPI_Irecv(rbuf(:, k), n, MPI_INTEGER, left, k, MPI_COMM_WORLD, reqs(k), ierr)
    call MPI_Isend(sbuf, k * 1000, MPI_INTEGER, right, k, MPI_COMM_WORLD, reqs(4 + k))
  end do
  call MPI_Waitall(8, reqs, stats, ierr)
  do k = 1, 4
    call MPI_Get_count(stats(k), MPI_INTEGER, cnt, ierr)
    call record(cnt)
    call record(stats(k)%MPI_SOURCE)
    call record(stats(k)%MPI_TAG)
    call record(sum(rbuf(1:cnt, k)))
    if (reqs(k) /= MPI_REQUEST_NULL) failures = failures + 1
  end do

  ! Waitany: Fortran indices start at 1. MPICH 4.0.2's mpi_f08 (not its
  ! mpif.h) answers MPI_Waitany and MPI_Waitsome with C's indices, one less
  ! (MPICH 4.1 fixed it), and Tandem with the standard's, which
  ! f_indices_f08.f90 checks: here 'base' is what the first index reads as.
  call MPI_Irecv(rbuf, 1, MPI_INTEGER, 0, 76, MPI_COMM_SELF, reqs(1))
  call MPI_Isend(sbuf, 1, MPI_INTEGER, 0, 76, MPI_COMM_SELF, reqs(2))
  call MPI_Waitany(1, reqs, base, st)
  call MPI_Wait(reqs(2), MPI_STATUS_IGNORE)
  if (base /= 0 .and. base /= 1) failures = failures + 1
  call MPI_Irecv(rbuf, n, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(sbuf, 10, MPI_INTEGER, right, 77, MPI_COMM_WORLD, reqs(2))
  done = 0
  do while (done < 2)
    call MPI_Waitany(2, reqs, idx, st)
    idx = idx + 1 - base
    if (idx < 1 .or. idx > 2) failures = failures + 1
    if (idx == 1) call record(st%MPI_TAG)
    done = done + 1
  end do

  ! Waitsome and Test with a LOGICAL flag; MPI_STATUSES_IGNORE.
  call MPI_Irecv(rbuf, n, MPI_INTEGER, left, 5, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(sbuf, 33, MPI_INTEGER, right, 5, MPI_COMM_WORLD, reqs(2))
  done = 0
  do while (done < 2)
    call MPI_Waitsome(2, reqs, outcount, indices, stats, ierr)
    indices(1:outcount) = indices(1:outcount) + 1 - base
    do i = 1, outcount
      if (indices(i) < 1 .or. indices(i) > 2) failures = failures + 1
      if (indices(i) == 1) then
        call MPI_Get_count(stats(i), MPI_INTEGER, cnt)
        call record(cnt)
      end if
    end do
    done = done + outcount
  end do
  call MPI_Irecv(rbuf, n, MPI_INTEGER, left, 6, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(sbuf, 44, MPI_INTEGER, right, 6, MPI_COMM_WORLD, reqs(2))
  flag = .false.
  do while (.not. flag)
    call MPI_Test(reqs(1), flag, st)
  end do
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call record(cnt)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)

  ! Persistent requests with Startall; Iprobe and Probe.
  call MPI_Recv_init(rbuf, n, MPI_INTEGER, left, 8, MPI_COMM_WORLD, preq(1), ierr)
  call MPI_Send_init(sbuf, 123, MPI_INTEGER, right, 8, MPI_COMM_WORLD, preq(2))
  do k = 1, 3
    call MPI_Startall(2, preq)
    call MPI_Waitall(2, preq, stats)
  end do
  call MPI_Get_count(stats(1), MPI_INTEGER, cnt)
  call record(cnt)
  call MPI_Request_free(preq(1))
  call MPI_Request_free(preq(2), ierr)
  call MPI_Isend(sbuf, 55, MPI_INTEGER, right, 9, MPI_COMM_WORLD, reqs(1))
  flag = .false.
  do while (.not. flag)
    call MPI_Iprobe(left, 9, MPI_COMM_WORLD, flag, st)
  end do
  call MPI_Probe(left, 9, MPI_COMM_WORLD, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call record(cnt)
  call MPI_Recv(rbuf, cnt, MPI_INTEGER, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  call MPI_Sendrecv(sbuf, 66, MPI_INTEGER, right, 10, rbuf, n, MPI_INTEGER, left, 10, &
                    MPI_COMM_WORLD, st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call record(cnt)

  ! Collectives: MPI_IN_PLACE, a nonblocking one, Alltoallw with handle arrays.
  rbuf(1:4, 1) = (/ rank, 2 * rank, 3, 4 /)
  call MPI_Allreduce(MPI_IN_PLACE, rbuf(1, 1), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call record(sum(rbuf(1:4, 1)))
  call MPI_Iallreduce(sbuf, rbuf(:, 2), n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), st)
  call record(sum(rbuf(1:n, 2)))
  call MPI_Bcast(sbuf, 10, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD)
  call record(sum(sbuf(1:10)))
  allocate(wsend(nprocs), wrecv(nprocs))
  do i = 1, nprocs
    wsend(i) = rank * 100 + i
    types(i) = MPI_INTEGER
    counts(i) = 1
    displs(i) = (i - 1) * 4
  end do
  call MPI_Alltoallw(wsend, counts, displs, types, wrecv, counts, displs, types, &
                     MPI_COMM_WORLD, ierr)
  call record(sum(wrecv))

  ! Array sections: a row of a matrix and every other element, through
  ! blocking calls, where Open MPI's copies are as good as MPICH's subarrays.
  do i = 1, 8
    grid(:, i) = (/ (rank * 1000 + 10 * i + k, k = 1, 6) /)
  end do
  strided = -1
  call MPI_Sendrecv(grid(2, :), 8, MPI_INTEGER, right, 11, strided(1:16:2), 8, MPI_INTEGER, &
                    left, 11, MPI_COMM_WORLD, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call record(cnt)
  call record(sum(strided(1:16)))
  strided = -1
  call MPI_Allgather(grid(3, 1:5:2), 3, MPI_INTEGER, strided, 3, MPI_INTEGER, MPI_COMM_WORLD)
  call record(sum(strided(1:3 * nprocs)))
  call MPI_Bcast(grid(1:6:5, 2:8:3), 6, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call record(sum(grid(1:6:5, 2:8:3)))
  call record(sum(grid))
  ! Nonblocking, where the MPI library takes sections (MPICH): among them a
  ! nonblocking collective on a section, whose temporary datatype outlives
  ! the call in Tandem's collectives. Elsewhere the same, through copies.
  ! (MPICH's mpi_f08 gives one section's datatype to both buffers of a
  ! reduction and the count of one block to a gather's whole receive
  ! buffer, and MPICH 4.0.2 reduces no derived datatype with MPI_SUM: the
  ! sections here are the ones whose meaning both MPIs agree on.)
  strided = 0
  if (MPI_SUBARRAYS_SUPPORTED) then
    call MPI_Ibcast(grid(2:6:2, 1:8:7), 6, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD, reqs(1))
    call MPI_Irecv(strided(1:24:3), 8, MPI_INTEGER, left, 12, MPI_COMM_WORLD, reqs(2))
    call MPI_Isend(grid(5, :), 8, MPI_INTEGER, right, 12, MPI_COMM_WORLD, reqs(3))
    call MPI_Iallgather(grid(6, 2:8:2), 4, MPI_INTEGER, strided(25), 4, MPI_INTEGER, &
                        MPI_COMM_WORLD, reqs(4))
    call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE)
  else
    call MPI_Bcast(grid(2:6:2, 1:8:7), 6, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD)
    call MPI_Sendrecv(grid(5, :), 8, MPI_INTEGER, right, 12, strided(1:24:3), 8, MPI_INTEGER, &
                      left, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Allgather(grid(6, 2:8:2), 4, MPI_INTEGER, strided(25), 4, MPI_INTEGER, &
                       MPI_COMM_WORLD)
  end if
  call record(sum(strided))
  call record(sum(grid(2:6:2, 1:8:7)))

  ! Nonblocking MPI-IO: the count in the status.
  call MPI_File_open(MPI_COMM_WORLD, 'tandem-fortran-io.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  offset = rank * n * 4
  call MPI_File_iwrite_at(fh, offset, sbuf, n, MPI_INTEGER, reqs(1))
  call MPI_Wait(reqs(1), st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call record(cnt)
  call MPI_File_iread_at(fh, offset, rbuf(:, 3), n, MPI_INTEGER, reqs(1), ierr)
  call MPI_Wait(reqs(1), st)
  call record(sum(rbuf(1:n, 3)))
  call MPI_File_close(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) call MPI_File_delete('tandem-fortran-io.dat', MPI_INFO_NULL)

  ! One-sided: Win_create, Put, fence. Expected failure: Open MPI 4.1.4
  ! cannot create a window on one process (MPI_ERR_WIN under every osc).
  call MPI_Get_library_version(libname, cnt)
  if (nprocs == 1 .and. libname(1:8) == 'Open MPI') goto 100
  wmem = 0
  winsize = n * 4
  call MPI_Win_create(wmem, winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_fence(0, win)
  disp = 0
  call MPI_Put(sbuf, 100, MPI_INTEGER, right, disp, 100, MPI_INTEGER, win)
  call MPI_Win_fence(0, win, ierr)
  call record(sum(wmem))
  call MPI_Win_free(win)
  if (win /= MPI_WIN_NULL) failures = failures + 1
100 continue

  ! Rank 0 prints every rank's summary.
  allocate(everything(nsum, nprocs))
  call MPI_Gather(summary, nsum, MPI_INTEGER, everything, nsum, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Reduce(failures, allfail, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 1, nprocs
      write (*, '(A, I0, A, 48(1X, I0))') 'rank ', i - 1, ':', everything(1:slot, i)
    end do
    if (allfail == 0) then
      print '(A)', 'ok'
    else
      print '(A, I0)', 'FAILED checks: ', allfail
    end if
  end if
  call MPI_Bcast(allfail, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Finalize()
  if (allfail /= 0) error stop 1

contains

  subroutine record(value)
    integer, intent(in) :: value
    slot = slot + 1
    summary(slot) = value
  end subroutine record
end program f_usempif08
