! The MPI-4 communicator constructors from Fortran (built where the MPI is
! MPI 4: MPICH here, not Open MPI 4.1). MPICH's Fortran bindings call the C
! MPI_* functions, so Tandem's C entry points see MPI_Comm_create_from_group
! and MPI_Comm_idup_with_info, and make their state there: the first
! nonblocking collective on each communicator waits for no other rank (rank r
! posts its MPI_Ibcast before it passes a token on to r + 1).
!
! Rank 0 prints every rank's rank in each communicator and the broadcast's
! sum, the same with and without Tandem.
program f_mpi4
  use mpi
  implicit none
  integer, parameter :: ndata = 1000
  integer :: ierr, rank, nprocs, world_group, comm, req, kind, i, failures, allfail
  integer :: summary(4), data(ndata)
  integer, allocatable :: everything(:, :)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  failures = 0
  do kind = 1, 2
    if (kind == 1) then
      call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
      call MPI_Comm_create_from_group(world_group, 'tandem.f_mpi4', MPI_INFO_NULL, &
                                      MPI_ERRORS_RETURN, comm, ierr)
      call MPI_Group_free(world_group, ierr)
    else
      call MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, comm, req, ierr)
      call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    end if
    if (ierr /= MPI_SUCCESS) failures = failures + 1
    call chain(comm, summary(2 * kind - 1), summary(2 * kind))
    call MPI_Comm_free(comm, ierr)
  end do

  allocate(everything(4, nprocs))
  call MPI_Gather(summary, 4, MPI_INTEGER, everything, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Reduce(failures, allfail, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 1, nprocs
      write (*, '(A, I0, A, 4(1X, I0))') 'rank ', i - 1, ':', everything(:, i)
    end do
    if (allfail == 0) then
      print '(A)', 'ok'
    else
      print '(A, I0)', 'FAILED checks: ', allfail
    end if
  end if
  call MPI_Bcast(allfail, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (allfail /= 0) error stop 1

contains

  include 'chain.inc'
end program f_mpi4
