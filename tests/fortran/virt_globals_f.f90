! Shared variables of a Fortran program (tests/python/test_virt_fortran.py):
! each rank sets a module variable, a common block, a saved variable and an
! initialised module array to values of its own, meets the others in
! barriers (where the other ranks of its core run), and prints what it
! reads back; MPI_IN_PLACE, a sentinel of the MPI's own common blocks, must
! still be recognised. Processes of the real MPI, or virtual ranks built
! with `tandem fc --privatize`, print their own values; virtual ranks
! without it share one copy.
module state
    implicit none
    integer :: counter
    double precision :: table(64) = 1.0d0
end module state

program virt_globals_f
    use mpi
    use state
    implicit none
    integer :: ierr, rank, i, total, ids
    common /tally/ total
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    counter = 100 * rank
    table(64) = rank + 0.5d0
    total = 7 + rank
    do i = 1, 3
        ids = next_id()
        call MPI_Barrier(MPI_COMM_WORLD, ierr)
    end do
    i = 1
    call MPI_Allreduce(MPI_IN_PLACE, i, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    print '(a, i0, a, i0, a, f4.1, a, i0, a, i0, a, i0)', 'rank ', rank, ': counter ', counter, &
        ' table ', table(64), ' total ', total, ' id ', ids, ' ranks ', i
    call MPI_Finalize(ierr)

contains

    ! A saved variable of a procedure (gfortran: a local static).
    integer function next_id()
        integer, save :: id = 0
        id = id + 1
        next_id = id
    end function next_id
end program virt_globals_f
