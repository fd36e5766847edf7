! f_transparency.f90 through the mpi_f08 module: arguments that are not
! significant at a rank (MPI_DATATYPE_NULL and -1 at the non-roots of a
! gather and a scatter, MPI_IN_PLACE at the root), a derived datatype and a
! user-defined operation freed while the nonblocking collectives that use
! them are in flight, and a passive-target accumulate into a rank that waits
! in MPI_Barrier. Rank 0 prints what every rank recorded, so the output can
! be compared between a run with and a run without Tandem.
module f_transparency_f08_ops
  use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
  use mpi_f08
  implicit none
contains
  ! inout = in + inout on integers (an MPI_User_function of mpi_f08).
  subroutine add_ints(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = b + a
    if (datatype == MPI_DATATYPE_NULL) b = 0 ! never: keeps the argument used
  end subroutine add_ints
end module f_transparency_f08_ops

program f_transparency_f08
  use mpi_f08
  use f_transparency_f08_ops
  implicit none
  integer, parameter :: n = 4096
  integer :: ierr, rank, nprocs, root, i, failures, allfail, target
  integer :: mine(n), all(n * 4), nothing(1)
  integer :: summary(8), everything(8, 64)
  integer(kind=MPI_ADDRESS_KIND) :: winsize, disp
  integer :: wmem(8)
  type(MPI_Datatype) :: blocktype
  type(MPI_Op) :: addop
  type(MPI_Request) :: reqs(2)
  type(MPI_Win) :: win

  failures = 0
  summary = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  root = nprocs - 1
  do i = 1, n
    mine(i) = rank * n + i
  end do

  ! Gather: nonsense in the receive arguments off the root, MPI_IN_PLACE on it.
  all = -1
  if (rank == root) then
    all(root * 8 + 1:root * 8 + 8) = mine(1:8)
    call MPI_Gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all, 8, MPI_INTEGER, root, &
                    MPI_COMM_WORLD, ierr)
    summary(1) = sum(all(1:8 * nprocs))
  else
    call MPI_Gather(mine, 8, MPI_INTEGER, nothing, -1, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD)
  end if
  ! Scatter: nonsense in the send arguments off the root.
  all = -1
  if (rank == root) then
    do i = 1, 8 * nprocs
      all(i) = 1000 + i
    end do
    call MPI_Scatter(all, 8, MPI_INTEGER, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root, &
                     MPI_COMM_WORLD)
  else
    call MPI_Scatter(nothing, -1, MPI_DATATYPE_NULL, all, 8, MPI_INTEGER, root, &
                     MPI_COMM_WORLD, ierr)
    summary(2) = sum(all(1:8))
  end if

  ! A derived datatype and a user-defined operation freed in flight.
  call MPI_Type_contiguous(n, MPI_INTEGER, blocktype)
  call MPI_Type_commit(blocktype)
  call MPI_Op_create(add_ints, .true., addop)
  all = -1
  call MPI_Iallgather(mine, 1, blocktype, all, 1, blocktype, MPI_COMM_WORLD, reqs(1))
  call MPI_Iallreduce(MPI_IN_PLACE, mine, n, MPI_INTEGER, addop, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Type_free(blocktype)
  call MPI_Op_free(addop, ierr)
  if (blocktype /= MPI_DATATYPE_NULL .or. addop /= MPI_OP_NULL) failures = failures + 1
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  summary(3) = sum(all(1:n * min(nprocs, 4)))
  summary(4) = sum(mine(1:n))
  do i = 1, n
    if (mine(i) /= nprocs * i + n * nprocs * (nprocs - 1) / 2) failures = failures + 1
  end do

  ! Passive target: the others accumulate into rank 1 while it waits in a barrier.
  target = min(1, nprocs - 1)
  wmem = 0
  winsize = 8 * 4
  call MPI_Win_create(wmem, winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank /= target .or. nprocs == 1) then
    disp = 0
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win)
    call MPI_Accumulate(mine, 8, MPI_INTEGER, target, disp, 8, MPI_INTEGER, MPI_SUM, win)
    call MPI_Win_unlock(target, win, ierr)
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == target) then
    call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win)
    summary(5) = sum(wmem)
    call MPI_Win_unlock(rank, win)
  end if
  call MPI_Win_free(win)

  call MPI_Gather(summary, 8, MPI_INTEGER, everything, 8, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Reduce(failures, allfail, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0) then
    do i = 1, nprocs
      print '(A,I0,A,8(1X,I0))', 'rank ', i - 1, ':', everything(:, i)
    end do
    print '(A,I0)', 'failures ', allfail
  end if
  call MPI_Finalize()
  if (rank == 0 .and. allfail /= 0) stop 1
end program f_transparency_f08
