! f_mpi4.f90 through the mpi_f08 module (built where the MPI is MPI 4: MPICH
! here, not Open MPI 4.1). MPICH's mpi_f08 calls PMPI_Comm_create_from_group
! and PMPI_Comm_idup_with_info, not the C MPI_* functions as its mpif.h
! does, so only Tandem's own mpi_f08 entry points see them: the first
! nonblocking collective on each communicator waits for no other rank (rank
! r posts its MPI_Ibcast before it passes a token on to r + 1). The string
! tag has trailing blanks, which MPI ignores.
!
! Rank 0 prints every rank's rank in each communicator and the broadcast's
! sum, the same with and without Tandem.
program f_mpi4_f08
  use mpi_f08
  implicit none
  integer, parameter :: ndata = 1000
  integer :: ierr, kind, failures
  integer :: summary(4), data(ndata)
  character(len=20) :: tag
  type(MPI_Group) :: world_group
  type(MPI_Comm) :: comm
  type(MPI_Request) :: req

  call MPI_Init()
  failures = 0
  tag = 'tandem.f_mpi4_f08'
  do kind = 1, 2
    if (kind == 1) then
      call MPI_Comm_group(MPI_COMM_WORLD, world_group)
      call MPI_Comm_create_from_group(world_group, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, comm, &
                                      ierr)
      call MPI_Group_free(world_group)
    else
      call MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, comm, req, ierr)
      call MPI_Wait(req, MPI_STATUS_IGNORE)
    end if
    if (ierr /= MPI_SUCCESS) failures = failures + 1
    call chain(comm, summary(2 * kind - 1), summary(2 * kind))
    call MPI_Comm_free(comm)
  end do

  call report(summary, 4)

contains

  include 'first_use_f08.inc'
end program f_mpi4_f08
