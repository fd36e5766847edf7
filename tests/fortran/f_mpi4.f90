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
  integer :: ierr, world_group, comm, req, kind, failures
  integer :: summary(4), data(ndata)

  call MPI_Init(ierr)
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

  call report(summary, 4)

contains

  include 'first_use.inc'
end program f_mpi4
