! One-sided from Fortran on an MPI_Win_allocate window (the mpi module, the
! window's memory reached through c_f_pointer): the window the progress
! processes serve (TANDEM_GHOSTS). Under fence every rank puts into its right
! neighbour's window and gets it back; then every rank adds its rank + 1 to
! a counter in rank 0's window, 20 times, by get, flush and put under an
! exclusive lock: no increment may be lost. Rank 0 prints the outcome.
program f_rma_allocate
  use mpi
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer, parameter :: n = 256, rounds = 20
  integer :: rank, nprocs, right, left, ierr, win, i, r, failures, allfail
  integer :: counter(1), one(1)
  integer :: sbuf(n), got(n)
  integer, pointer :: wmem(:)
  type(c_ptr) :: base
  integer(kind=MPI_ADDRESS_KIND) :: winsize, disp

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  failures = 0
  winsize = n * 4
  call MPI_Win_allocate(winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, base, win, ierr)
  call c_f_pointer(base, wmem, [n])
  do i = 1, n
    wmem(i) = 0
    sbuf(i) = rank * 100000 + 3 * i
  end do

  call MPI_Win_fence(0, win, ierr)
  disp = 0
  call MPI_Put(sbuf, n, MPI_INTEGER, right, disp, n, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call MPI_Get(got, n, MPI_INTEGER, right, disp, n, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  do i = 1, n
    if (wmem(i) /= left * 100000 + 3 * i) failures = failures + 1
    if (got(i) /= sbuf(i)) failures = failures + 1
  end do
  if (failures > 0) print '(A, I0, A, I0)', 'rank ', rank, ': fence failures ', failures

  ! The counter: rank 0's first integer, from 0.
  if (rank == 0) wmem(1) = 0
  call MPI_Win_fence(0, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  disp = 0
  do r = 1, rounds
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win, ierr)
    call MPI_Get(counter, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, ierr)
    call MPI_Win_flush(0, win, ierr)
    one(1) = counter(1) + rank + 1
    call MPI_Put(one, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, ierr)
    call MPI_Win_unlock(0, win, ierr)
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
  call MPI_Get(counter, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, ierr)
  call MPI_Win_unlock(0, win, ierr)
  if (counter(1) /= rounds * nprocs * (nprocs + 1) / 2) then
    print '(A, I0, A, I0)', 'rank ', rank, ': counter ', counter(1)
    failures = failures + 1
  end if

  call MPI_Win_free(win, ierr)
  call MPI_Allreduce(failures, allfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (allfail == 0) then
      print '(A, I0, A)', 'f_rma_allocate: ', nprocs, ' ranks: fence and exclusive counter ok'
    else
      print '(A, I0)', 'f_rma_allocate: FAILED, wrong values: ', allfail
    end if
  end if
  call MPI_Finalize(ierr)
  if (allfail /= 0) stop 1
end program f_rma_allocate
