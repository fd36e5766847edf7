! f_first_use.f90 through the mpi_f08 module: the first nonblocking
! collective on communicators made with the topology constructors,
! MPI_Intercomm_merge and MPI_Comm_idup waits for no other rank (rank r waits
! for a token from r - 1, posts its MPI_Ibcast and only then passes the token
! on). Neither MPI library's mpi_f08 calls the C MPI_* functions for them,
! so only Tandem's own mpi_f08 entry points see them.
!
! Rank 0 prints what every rank saw: the broadcast's sum on each communicator
! and what the communicator was made with (LOGICAL arguments and
! MPI_UNWEIGHTED reach the MPI library unchanged), the same with and without
! Tandem.
program f_first_use_f08
  use mpi_f08
  implicit none
  integer, parameter :: ndata = 1000, kinds = 8, nsum = 3 * kinds
  integer :: ierr, rank, nprocs, right, left, kind, i
  integer :: dims(1), indx(64), edges(64), one(1), weight(1), me(1)
  integer :: indeg, outdeg, source, dest, csize, crank, slot, failures
  integer :: chain_rank, chain_sum
  integer :: summary(nsum), data(ndata)
  type(MPI_Comm) :: comm, cart, half, inter
  type(MPI_Request) :: req, req2
  logical :: periods(1), remain(1), weighted, high

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
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
    ierr = MPI_SUCCESS
    select case (kind)
    case (1) ! periodic: the left neighbour of rank 0 is the last rank
      call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., comm, ierr)
      call MPI_Cart_shift(comm, 0, 1, source, dest)
      call record(source)
    case (2)
      call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, [.false.], .false., cart)
      call MPI_Cart_sub(cart, remain, comm, ierr)
      call MPI_Comm_free(cart)
      call MPI_Cart_shift(comm, 0, 1, source, dest) ! not periodic
      call record(source)
    case (3)
      call MPI_Graph_create(MPI_COMM_WORLD, nprocs, indx, edges, .false., comm, ierr)
      call MPI_Graph_neighbors_count(comm, rank, i)
      call record(i)
    case (4)
      call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [left], MPI_UNWEIGHTED, 1, &
                                          [right], MPI_UNWEIGHTED, MPI_INFO_NULL, .false., &
                                          comm, ierr)
      call MPI_Dist_graph_neighbors_count(comm, indeg, outdeg, weighted)
      call record(merge(1, 0, weighted))
    case (5)
      call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me, one, [right], weight, MPI_INFO_NULL, &
                                 .false., comm)
      call MPI_Dist_graph_neighbors_count(comm, indeg, outdeg, weighted)
      call record(merge(1, 0, weighted))
    case (6) ! the upper half of the ranks first
      if (nprocs < 2) then
        call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
      else
        high = rank < nprocs / 2
        call MPI_Comm_split(MPI_COMM_WORLD, merge(0, 1, high), rank, half)
        call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, merge(nprocs / 2, 0, high), 9, &
                                  inter)
        call MPI_Intercomm_merge(inter, high, comm, ierr)
        call MPI_Comm_free(inter)
        call MPI_Comm_free(half)
      end if
      call MPI_Comm_rank(comm, crank)
      call record(crank)
    case (7)
      call MPI_Comm_idup(MPI_COMM_WORLD, comm, req, ierr)
      call MPI_Wait(req, MPI_STATUS_IGNORE)
      call MPI_Comm_size(comm, csize)
      call record(csize)
    case default ! one not yet complete when the next is posted
      call MPI_Comm_idup(MPI_COMM_WORLD, cart, req)
      call MPI_Comm_idup(MPI_COMM_WORLD, comm, req2)
      call MPI_Wait(req2, MPI_STATUS_IGNORE)
      call MPI_Wait(req, MPI_STATUS_IGNORE)
      call MPI_Comm_free(cart, ierr)
      call MPI_Comm_size(comm, csize)
      call record(csize)
    end select
    if (ierr /= MPI_SUCCESS) failures = failures + 1
    call chain(comm, chain_rank, chain_sum)
    call record(chain_rank)
    call record(chain_sum)
    call MPI_Comm_free(comm)
  end do

  call report(summary, slot)

contains

  subroutine record(value)
    integer, intent(in) :: value
    slot = slot + 1
    summary(slot) = value
  end subroutine record

  include 'first_use_f08.inc'
end program f_first_use_f08
