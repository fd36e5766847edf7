! One-sided from Fortran (the mpi module): an MPI_Win_create window of
! integers, every rank to its right neighbour. Under fence: a put, an
! accumulate (MPI_SUM) and a get; under lock: an accumulate of every rank
! into rank 0's window (lock shared), a put (lock exclusive) and a get back
! (lock shared). Each rank checks its window and what it got; rank 0 prints
! the outcome. A window the MPI library refuses (Open MPI 4.1.4 on one
! process) is reported, found at run time through MPI_ERRORS_RETURN.
program f_rma
  use mpi
  implicit none
  integer, parameter :: n = 256 ! 1 KiB: a multiple of 64 bytes (MPICH 4.0.2)
  integer :: rank, nprocs, right, left, ierr, win, i, failures, allfail, rc, worst
  integer :: wmem(n), sbuf(n), ones(n), got(n)
  integer(kind=MPI_ADDRESS_KIND) :: winsize, disp

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  failures = 0
  do i = 1, n
    wmem(i) = rank * 1000 + i
    sbuf(i) = rank * 100000 + 3 * i
  end do

  winsize = n * 4
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Win_create(wmem, winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, rc)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  call MPI_Allreduce(rc, worst, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (worst /= MPI_SUCCESS) then
    if (rank == 0) print '(A)', 'f_rma: skipped: the MPI library refuses the window natively too'
    call MPI_Finalize(ierr)
    stop
  end if

  ! Fence: put the first half, add to the second, then get it all back.
  call MPI_Win_fence(MPI_MODE_NOPRECEDE, win, ierr)
  disp = 0
  call MPI_Put(sbuf, n / 2, MPI_INTEGER, right, disp, n / 2, MPI_INTEGER, win, ierr)
  disp = n / 2
  call MPI_Accumulate(sbuf(n / 2 + 1), n / 2, MPI_INTEGER, right, disp, n / 2, MPI_INTEGER, &
                      MPI_SUM, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  disp = 0
  call MPI_Get(got, n, MPI_INTEGER, right, disp, n, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, win, ierr)
  do i = 1, n / 2
    if (wmem(i) /= left * 100000 + 3 * i) failures = failures + 1
    if (got(i) /= sbuf(i)) failures = failures + 1
  end do
  do i = n / 2 + 1, n
    if (wmem(i) /= rank * 1000 + i + left * 100000 + 3 * i) failures = failures + 1
    if (got(i) /= right * 1000 + i + sbuf(i)) failures = failures + 1
  end do
  if (failures > 0) print '(A, I0, A, I0)', 'rank ', rank, ': fence failures ', failures

  ! Lock shared: every rank adds rank + 1 to all of rank 0's window.
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win, ierr)
  wmem = 7
  call MPI_Win_unlock(rank, win, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  ones = rank + 1
  disp = 0
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
  call MPI_Accumulate(ones, n, MPI_INTEGER, 0, disp, n, MPI_INTEGER, MPI_SUM, win, ierr)
  call MPI_Win_unlock(0, win, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win, ierr)
    if (any(wmem /= 7 + nprocs * (nprocs + 1) / 2)) failures = failures + 1
    call MPI_Win_unlock(0, win, ierr)
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  ! Lock exclusive: a put to the right neighbour; lock shared: get it back.
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win, ierr)
  call MPI_Put(sbuf, n, MPI_INTEGER, right, disp, n, MPI_INTEGER, win, ierr)
  call MPI_Win_unlock(right, win, ierr)
  got = -1
  call MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win, ierr)
  call MPI_Get(got, n, MPI_INTEGER, right, disp, n, MPI_INTEGER, win, ierr)
  call MPI_Win_unlock(right, win, ierr)
  if (any(got /= sbuf)) failures = failures + 1
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win, ierr)
  do i = 1, n
    if (wmem(i) /= left * 100000 + 3 * i) failures = failures + 1
  end do
  call MPI_Win_unlock(rank, win, ierr)

  call MPI_Win_free(win, ierr)
  call MPI_Reduce(failures, allfail, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (allfail == 0) then
      print '(A, I0, A)', 'f_rma: put, get and accumulate under fence and lock on ', nprocs, &
        ' ranks as expected'
    else
      print '(A, I0, A)', 'f_rma: FAILED, ', allfail, ' wrong values'
    end if
  end if
  call MPI_Finalize(ierr)
  if (allfail /= 0 .and. rank == 0) error stop 1
end program f_rma
