! The mpi_f08 module's form of tests/fortran/virt_f.f90's checks, for the
! virtual ranks' transparency test on Open MPI (tests/python/
! test_virt_fortran.py): handles of derived types, statuses with fields,
! ierror left out, and MPI_Waitany's index from 1; then non-contiguous array
! sections as buffers (rows of a column-major array: through a descriptor
! on MPICH, whose MPI_SUBARRAYS_SUPPORTED is true, and as the compiler's
! copies on Open MPI, whose nonblocking calls then take contiguous arrays).
! Rank 0 prints every rank's results in rank order.
program virt_f08
    use mpi_f08
    implicit none
    integer, parameter :: big = 300000 ! above the eager limit
    integer :: rank, size, next, prev, provided, i, count, index, token, got, ierr
    integer :: results(12), table(12, 64), left, right, subrank, subsize, dims(1), pair(2)
    type(MPI_Status) :: status, statuses(2)
    type(MPI_Request) :: requests(2)
    type(MPI_Comm) :: sub, cart
    type(MPI_Datatype) :: vector
    logical :: periods(1), flag
    double precision :: sums(3)
    double precision, allocatable :: buf(:), back(:)
    integer, allocatable :: blocks(:), received(:), wide(:, :), ones(:), places(:)
    integer :: grid(4, 5), row(5), six(6), sect(10), stable(10, 64)
    type(MPI_Request) :: persistent

    call MPI_Init_thread(MPI_THREAD_SINGLE, provided)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, size)
    next = mod(rank + 1, size)
    prev = mod(rank + size - 1, size)
    results = 0

    ! 1-2. A ring of one integer: its source, tag and count from the status.
    token = 100 + rank
    call MPI_Sendrecv(token, 1, MPI_INTEGER, next, 7, got, 1, MPI_INTEGER, prev, 7, &
                      MPI_COMM_WORLD, status)
    call MPI_Get_count(status, MPI_INTEGER, count)
    results(1) = got
    results(2) = status%MPI_SOURCE * 1000 + status%MPI_TAG * 10 + count

    ! 3-4. Large messages completed by MPI_Waitall with statuses; the index
    ! MPI_Waitany gives (from 1) and the request it frees.
    allocate (buf(big), back(big))
    do i = 1, big
        buf(i) = rank + i * 1.0d-6
    end do
    call MPI_Irecv(back, big, MPI_DOUBLE_PRECISION, prev, 8, MPI_COMM_WORLD, requests(1))
    call MPI_Isend(buf, big, MPI_DOUBLE_PRECISION, next, 8, MPI_COMM_WORLD, requests(2))
    call MPI_Waitall(2, requests, statuses)
    results(3) = nint(back(big) * 1000) + statuses(1)%MPI_SOURCE
    call MPI_Irecv(got, 1, MPI_INTEGER, prev, 9, MPI_COMM_WORLD, requests(1))
    call MPI_Isend(token, 1, MPI_INTEGER, next, 9, MPI_COMM_WORLD, requests(2))
    call MPI_Waitany(1, requests(1:1), index, MPI_STATUS_IGNORE)
    call MPI_Wait(requests(2), MPI_STATUS_IGNORE, ierr)
    results(4) = index * 1000 + merge(1, 0, requests(1) == MPI_REQUEST_NULL) + ierr

    ! 5. A strided column (a derived type of the real MPI) to the next rank.
    call MPI_Type_vector(4, 1, 3, MPI_INTEGER, vector)
    call MPI_Type_commit(vector)
    allocate (blocks(12), received(4))
    blocks = [(rank * 100 + i, i = 1, 12)]
    call MPI_Sendrecv(blocks, 1, vector, next, 10, received, 4, MPI_INTEGER, prev, 10, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Type_free(vector)
    results(5) = sum(received)

    ! 6-7. A broadcast, and a reduction in place.
    pair = [rank, merge(42, 0, rank == 0)]
    call MPI_Bcast(pair(2), 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    results(6) = pair(2)
    sums = [dble(rank), 1.0d0, dble(rank * rank)]
    call MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    results(7) = nint(sums(1) + 10 * sums(2) + 100 * sums(3))

    ! 8. An alltoall of one integer per pair.
    deallocate (blocks, received)
    allocate (blocks(size), received(size))
    blocks = [(rank * 1000 + i, i = 0, size - 1)]
    call MPI_Alltoall(blocks, 1, MPI_INTEGER, received, 1, MPI_INTEGER, MPI_COMM_WORLD)
    results(8) = sum(received)

    ! 9. Split into even and odd ranks, reduce on the half, free it.
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, sub)
    call MPI_Comm_rank(sub, subrank)
    call MPI_Comm_size(sub, subsize)
    call MPI_Allreduce(rank, got, 1, MPI_INTEGER, MPI_MAX, sub)
    call MPI_Comm_free(sub)
    results(9) = subrank * 10000 + subsize * 100 + got + merge(1000000, 0, sub == MPI_COMM_NULL)

    ! 10. A periodic ring as a Cartesian communicator.
    dims(1) = size
    periods(1) = .true.
    call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart)
    call MPI_Cart_shift(cart, 0, 1, left, right)
    call MPI_Comm_free(cart)
    results(10) = left * 100 + right

    ! 11. A probe for a message that has not come, then for one that has.
    call MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE)
    results(11) = merge(1000, 0, flag)
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Isend(token, 1, MPI_INTEGER, next, 11, MPI_COMM_WORLD, requests(2))
    call MPI_Probe(prev, 11, MPI_COMM_WORLD, status)
    call MPI_Recv(got, 1, MPI_INTEGER, status%MPI_SOURCE, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Wait(requests(2), MPI_STATUS_IGNORE)
    results(11) = results(11) + got

    ! 12. A nonblocking reduction to rank 0, tested until done.
    call MPI_Ireduce(rank, got, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, requests(1))
    flag = .false.
    do while (.not. flag)
        call MPI_Test(requests(1), flag, MPI_STATUS_IGNORE)
    end do
    results(12) = merge(got, -1, rank == 0)

    ! Sections. 1: a row sent and a whole array received.
    grid = reshape([(rank * 100 + i, i = 1, 20)], [4, 5])
    row = 0
    sect = 0
    call MPI_Sendrecv(grid(2, :), 5, MPI_INTEGER, next, 13, row, 5, MPI_INTEGER, prev, 13, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    sect(1) = dot_product(row, [1, 2, 3, 4, 5])

    ! 2: 3 items into a row of 5 (the first 3 of the section), and a
    ! two-dimensional section of 6 items.
    call MPI_Sendrecv(row, 3, MPI_INTEGER, next, 14, grid(3, :), 3, MPI_INTEGER, prev, 14, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Sendrecv(grid(1:2, 1:5:2), 6, MPI_INTEGER, next, 15, six, 6, MPI_INTEGER, prev, 15, &
                      MPI_COMM_WORLD, status)
    call MPI_Get_count(status, MPI_INTEGER, count)
    sect(2) = dot_product(grid(3, :), [1, 2, 3, 4, 5]) + 7 * dot_product(six, [1, 2, 3, 4, 5, 6]) + 100000 * count

    ! 3: nonblocking receive into a strided part of a row, sent from a row.
    if (MPI_SUBARRAYS_SUPPORTED) then
        call MPI_Irecv(grid(4, 1:5:2), 3, MPI_INTEGER, prev, 16, MPI_COMM_WORLD, requests(1))
        call MPI_Isend(grid(1, :), 3, MPI_INTEGER, next, 16, MPI_COMM_WORLD, requests(2))
        call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)
    else
        call MPI_Sendrecv(grid(1, :), 3, MPI_INTEGER, next, 16, grid(4, 1:5:2), 3, MPI_INTEGER, &
                          prev, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    end if
    sect(3) = dot_product(grid(4, :), [1, 2, 3, 4, 5])

    ! 4: a persistent send of a row, started twice.
    do i = 1, 2
        grid(2, :) = grid(2, :) + i
        if (MPI_SUBARRAYS_SUPPORTED) then
            if (i == 1) call MPI_Send_init(grid(2, :), 5, MPI_INTEGER, next, 17, MPI_COMM_WORLD, &
                                           persistent)
            call MPI_Start(persistent)
            call MPI_Recv(row, 5, MPI_INTEGER, prev, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
            call MPI_Wait(persistent, MPI_STATUS_IGNORE)
        else
            call MPI_Sendrecv(grid(2, :), 5, MPI_INTEGER, next, 17, row, 5, MPI_INTEGER, prev, 17, &
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        end if
        sect(4) = dot_product(row, [1, 2, 3, 4, 5]) + sect(4) * 1000
    end do
    if (MPI_SUBARRAYS_SUPPORTED) call MPI_Request_free(persistent)

    ! 5-6: reductions from a row into a row, and in place on a row.
    call MPI_Allreduce(grid(1, :), grid(2, :), 5, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    sect(5) = dot_product(grid(2, :), [1, 2, 3, 4, 5])
    call MPI_Allreduce(MPI_IN_PLACE, grid(3, :), 5, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    sect(6) = dot_product(grid(3, :), [1, 2, 3, 4, 5])

    ! 7: a nonblocking reduction from a row; 8: a broadcast into one.
    if (MPI_SUBARRAYS_SUPPORTED) then
        call MPI_Iallreduce(grid(4, :), row, 5, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, requests(1))
        call MPI_Wait(requests(1), MPI_STATUS_IGNORE)
    else
        call MPI_Allreduce(grid(4, :), row, 5, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
    end if
    sect(7) = dot_product(row(1:5), [1, 2, 3, 4, 5])
    grid(1, :) = [(rank * 10 + i, i = 1, 5)]
    call MPI_Bcast(grid(1, :), 5, MPI_INTEGER, size - 1, MPI_COMM_WORLD)
    sect(8) = dot_product(grid(1, :), [1, 2, 3, 4, 5])

    ! 9: a gatherv into a row at rank 0 (its counts as an array); 10: a
    ! nonblocking reduction into a row.
    allocate (wide(2, size), ones(size), places(size))
    wide = -1
    ones = 1
    places = [(i, i = 0, size - 1)]
    call MPI_Gatherv(rank * 3, 1, MPI_INTEGER, wide(2, :), ones, places, MPI_INTEGER, 0, &
                     MPI_COMM_WORLD)
    if (rank == 0) sect(9) = dot_product(wide(2, :), [(i, i = 1, size)]) + sum(wide(1, :))
    if (MPI_SUBARRAYS_SUPPORTED) then
        call MPI_Iallreduce(grid(4, :), grid(1, :), 5, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, &
                            requests(1))
        call MPI_Wait(requests(1), MPI_STATUS_IGNORE)
    else
        call MPI_Allreduce(grid(4, :), grid(1, :), 5, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    end if
    sect(10) = dot_product(grid(1, :), [1, 2, 3, 4, 5])
    deallocate (wide, ones, places)

    call MPI_Gather(results, 12, MPI_INTEGER, table, 12, MPI_INTEGER, 0, MPI_COMM_WORLD)
    call MPI_Gather(sect, 10, MPI_INTEGER, stable, 10, MPI_INTEGER, 0, MPI_COMM_WORLD)
    if (rank == 0) then
        print '(a, i0, a, i0)', 'ranks ', size, ', thread level ', provided
        do i = 0, size - 1
            print '(a, i0, a, 12(1x, i0))', 'rank ', i, ':', table(:, i + 1)
            print '(a, i0, a, 10(1x, i0))', 'sections ', i, ':', stable(:, i + 1)
        end do
    end if
    deallocate (buf, back, blocks, received)
    call MPI_Finalize()
end program virt_f08
