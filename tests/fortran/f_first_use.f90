! The first nonblocking collective on a communicator waits for no other rank,
! also on communicators a Fortran program makes with the topology
! constructors, MPI_Intercomm_merge and MPI_Comm_idup (Open MPI's Fortran
! calls PMPI_* directly, so only Tandem's own Fortran entry points see them).
! Rank r waits for a token from r - 1, posts its MPI_Ibcast and only then
! passes the token on: a first collective that waited for every rank deadlocks.
!
! Rank 0 prints what every rank saw: the broadcast's sum on each communicator
! and what the communicator was made with (LOGICAL arguments and
! MPI_UNWEIGHTED reach the MPI library unchanged), the same with and without
! Tandem.
program f_first_use
  use mpi
  implicit none
  integer, parameter :: ndata = 1000, kinds = 8, nsum = 3 * kinds
  integer :: ierr, rank, nprocs, right, left, kind, comm, cart, half, inter, req, i
  integer :: dims(1), coords(1), indx(64), edges(64), one(1), weight(1), me(1)
  integer :: indeg, outdeg, source, dest, csize, crank, slot, failures
  integer :: chain_rank, chain_sum
  integer :: summary(nsum), data(ndata)
  logical :: periods(1), remain(1), weighted, high

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  slot = 0
  summary = 0
  failures = 0
  dims(1) = nprocs
  periods(1) = .true.
  remain(1) = .true.
  one(1) = 1
  weight(1) = 1
  me(1) = rank
  do i = 1, nprocs ! a ring: node i - 1's one neighbour is i
    indx(i) = i
    edges(i) = mod(i, nprocs)
  end do

  do kind = 1, kinds
    select case (kind)
    case (1) ! periodic: the left neighbour of rank 0 is the last rank
      call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., comm, ierr)
      call MPI_Cart_shift(comm, 0, 1, source, dest, ierr)
      call record(source)
    case (2)
      call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, [.false.], .false., cart, ierr)
      call MPI_Cart_sub(cart, remain, comm, ierr)
      call MPI_Comm_free(cart, ierr)
      call MPI_Cart_shift(comm, 0, 1, source, dest, ierr) ! not periodic
      call record(source)
    case (3)
      call MPI_Graph_create(MPI_COMM_WORLD, nprocs, indx, edges, .false., comm, ierr)
      call MPI_Graph_neighbors_count(comm, rank, i, ierr)
      call record(i)
    case (4)
      call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [left], MPI_UNWEIGHTED, 1, &
                                          [right], MPI_UNWEIGHTED, MPI_INFO_NULL, .false., &
                                          comm, ierr)
      call MPI_Dist_graph_neighbors_count(comm, indeg, outdeg, weighted, ierr)
      call record(merge(1, 0, weighted))
    case (5)
      call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me, one, [right], weight, MPI_INFO_NULL, &
                                 .false., comm, ierr)
      call MPI_Dist_graph_neighbors_count(comm, indeg, outdeg, weighted, ierr)
      call record(merge(1, 0, weighted))
    case (6) ! the upper half of the ranks first
      if (nprocs < 2) then
        call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
      else
        high = rank < nprocs / 2
        call MPI_Comm_split(MPI_COMM_WORLD, merge(0, 1, high), rank, half, ierr)
        call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, merge(nprocs / 2, 0, high), 9, &
                                  inter, ierr)
        call MPI_Intercomm_merge(inter, high, comm, ierr)
        call MPI_Comm_free(inter, ierr)
        call MPI_Comm_free(half, ierr)
      end if
      call MPI_Comm_rank(comm, crank, ierr)
      call record(crank)
    case (7)
      call MPI_Comm_idup(MPI_COMM_WORLD, comm, req, ierr)
      call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
      call MPI_Comm_size(comm, csize, ierr)
      call record(csize)
    case default ! one not yet complete when the next is posted
      call MPI_Comm_idup(MPI_COMM_WORLD, cart, req, ierr)
      call MPI_Comm_idup(MPI_COMM_WORLD, comm, i, ierr)
      call MPI_Wait(i, MPI_STATUS_IGNORE, ierr)
      call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
      call MPI_Comm_free(cart, ierr)
      call MPI_Comm_size(comm, csize, ierr)
      call record(csize)
    end select
    if (ierr /= MPI_SUCCESS) failures = failures + 1
    call chain(comm, chain_rank, chain_sum)
    call record(chain_rank)
    call record(chain_sum)
    call MPI_Comm_free(comm, ierr)
  end do

  call report(summary, slot)

contains

  subroutine record(value)
    integer, intent(in) :: value
    slot = slot + 1
    summary(slot) = value
  end subroutine record

  include 'first_use.inc'
end program f_first_use
