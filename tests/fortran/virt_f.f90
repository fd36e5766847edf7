! A plain MPI Fortran program (the mpi module) for the virtual ranks'
! transparency test: built with the MPI's own mpif90 and with `tandem fc`,
! N processes and N virtual ranks must print the same. Every rank computes
! its results; rank 0 gathers and prints them in rank order, so the output
! does not depend on timing. No variable is saved between calls or kept in
! a module: the virtual ranks of a process would share it.
program virt_f
    use mpi
    implicit none
    integer, parameter :: big = 300000 ! above the eager limit
    integer :: ierr, rank, size, next, prev, provided, i, count, index, color
    integer :: sub, subrank, subsize, cart, left, right, vector, flag_count, op
    integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 4), requests(4)
    integer :: results(25), table(25, 64), handler, token, got, pair(2), dims(1), idx(3), clen
    character(len=MPI_MAX_OBJECT_NAME) :: cname
    integer :: same, plus, first, second
    integer(kind=MPI_ADDRESS_KIND) :: attr
    logical :: periods(1), flag
    double precision :: sums(3), t0
    double precision, allocatable :: buf(:), back(:)
    external maxabs, plus_copy, name_error
    integer, allocatable :: blocks(:), received(:)

    call MPI_Init_thread(MPI_THREAD_SINGLE, provided, ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
    next = mod(rank + 1, size)
    prev = mod(rank + size - 1, size)
    results = 0
    t0 = MPI_Wtime()

    ! 1-3. A ring of one integer: its source, tag and count from the status.
    token = 100 + rank
    call MPI_Sendrecv(token, 1, MPI_INTEGER, next, 7, got, 1, MPI_INTEGER, prev, 7, &
                      MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, MPI_INTEGER, count, ierr)
    results(1) = got
    results(2) = status(MPI_SOURCE) * 100 + status(MPI_TAG)
    results(3) = count

    ! 4-5. Large nonblocking messages both ways, completed by MPI_Waitall
    ! with statuses, and the index MPI_Waitany gives (counted from 1).
    allocate (buf(big), back(big))
    do i = 1, big
        buf(i) = rank + i * 1.0d-6
    end do
    call MPI_Irecv(back, big, MPI_DOUBLE_PRECISION, prev, 8, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Isend(buf, big, MPI_DOUBLE_PRECISION, next, 8, MPI_COMM_WORLD, requests(2), ierr)
    call MPI_Waitall(2, requests, statuses, ierr)
    results(4) = nint(back(big) * 1000) + statuses(MPI_SOURCE, 1)
    call MPI_Irecv(got, 1, MPI_INTEGER, prev, 9, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Send(token, 1, MPI_INTEGER, next, 9, MPI_COMM_WORLD, ierr)
    call MPI_Waitany(1, requests, index, MPI_STATUS_IGNORE, ierr)
    results(5) = index * 1000 + merge(1, 0, requests(1) == MPI_REQUEST_NULL)

    ! 6. A strided column (a derived type of the real MPI) to the next rank.
    call MPI_Type_vector(4, 1, 3, MPI_INTEGER, vector, ierr)
    call MPI_Type_commit(vector, ierr)
    allocate (blocks(12), received(4))
    blocks = [(rank * 100 + i, i = 1, 12)]
    call MPI_Sendrecv(blocks, 1, vector, next, 10, received, 4, MPI_INTEGER, prev, 10, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Type_free(vector, ierr)
    results(6) = sum(received)

    ! 7-9. Collectives: a broadcast, a reduction in place, a prefix sum.
    pair = [rank, 0]
    if (rank == 0) pair(2) = 42
    call MPI_Bcast(pair(2), 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    results(7) = pair(2)
    sums = [dble(rank), 1.0d0, dble(rank * rank)]
    call MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    results(8) = nint(sums(1) + 10 * sums(2) + 100 * sums(3))
    call MPI_Scan(rank + 1, results(9), 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)

    ! 10. An alltoall of one integer per pair.
    deallocate (blocks, received)
    allocate (blocks(size), received(size))
    blocks = [(rank * 1000 + i, i = 0, size - 1)]
    call MPI_Alltoall(blocks, 1, MPI_INTEGER, received, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    results(10) = sum(received)

    ! 11. Split into even and odd ranks, reduce on the half, free it.
    color = mod(rank, 2)
    call MPI_Comm_split(MPI_COMM_WORLD, color, -rank, sub, ierr)
    call MPI_Comm_rank(sub, subrank, ierr)
    call MPI_Comm_size(sub, subsize, ierr)
    call MPI_Allreduce(rank, got, 1, MPI_INTEGER, MPI_MAX, sub, ierr)
    results(11) = subrank * 10000 + subsize * 100 + got
    call MPI_Comm_free(sub, ierr)
    results(11) = results(11) + merge(1000000, 0, sub == MPI_COMM_NULL)

    ! 12. A periodic ring as a Cartesian communicator (logical periods).
    dims(1) = size
    periods(1) = .true.
    call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
    call MPI_Cart_shift(cart, 0, 1, left, right, ierr)
    results(12) = left * 100 + right
    call MPI_Comm_free(cart, ierr)

    ! 13. A probe for a message that has not come (flag false), then one that
    ! has: its source and count, then its receive; MPI_PROC_NULL.
    call MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE, ierr)
    flag_count = merge(1, 0, flag)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    ! (a blocking send to itself may wait for its receive: MPICH's does)
    call MPI_Isend(token, 1, MPI_INTEGER, next, 11, MPI_COMM_WORLD, requests(2), ierr)
    call MPI_Probe(prev, 11, MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, MPI_INTEGER, count, ierr)
    call MPI_Recv(got, count, MPI_INTEGER, status(MPI_SOURCE), 11, MPI_COMM_WORLD, &
                  MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(requests(2), MPI_STATUS_IGNORE, ierr)
    call MPI_Recv(got, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, status, ierr)
    results(13) = flag_count * 1000 + count * 100 + merge(1, 0, status(MPI_SOURCE) == MPI_PROC_NULL)

    ! 14. A nonblocking reduction to rank 0, tested until done.
    call MPI_Ireduce(rank, got, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, requests(1), ierr)
    flag = .false.
    do while (.not. flag)
        call MPI_Test(requests(1), flag, MPI_STATUS_IGNORE, ierr)
    end do
    results(14) = merge(got, -1, rank == 0)
    results(15) = merge(1, 0, MPI_Wtime() >= t0)

    ! 16. A reduction by a Fortran function of the program's (MPI_Op_create).
    call MPI_Op_create(maxabs, .true., op, ierr)
    pair = [-3 * rank, rank]
    call MPI_Allreduce(pair, dims, 1, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
    call MPI_Op_free(op, ierr)
    results(16) = dims(1) + merge(1000, 0, op == MPI_OP_NULL)
    results(17) = ierr

    ! 18-21. Attributes: MPI_TAG_UB; a keyval with MPI's MPI_COMM_DUP_FN and
    ! one with the program's copy function, through MPI_Comm_dup; deleted.
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, attr, flag, ierr)
    results(18) = merge(1, 0, flag .and. attr >= 32767)
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, same, &
                                0_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_create_keyval(plus_copy, MPI_COMM_NULL_DELETE_FN, plus, 5_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, first, ierr)
    call MPI_Comm_set_attr(first, same, int(rank + 42, MPI_ADDRESS_KIND), ierr)
    call MPI_Comm_set_attr(first, plus, int(rank, MPI_ADDRESS_KIND), ierr)
    call MPI_Comm_dup(first, second, ierr)
    call MPI_Comm_get_attr(second, same, attr, flag, ierr)
    results(19) = merge(int(attr), -1, flag)
    call MPI_Comm_get_attr(second, plus, attr, flag, ierr)
    results(20) = merge(int(attr), -1, flag)
    call MPI_Comm_delete_attr(second, same, ierr)
    call MPI_Comm_get_attr(second, same, attr, flag, ierr)
    results(21) = merge(1, 0, flag) + 10 * ierr
    call MPI_Comm_free(second, ierr)
    call MPI_Comm_free(first, ierr)
    call MPI_Comm_free_keyval(same, ierr)
    call MPI_Comm_free_keyval(plus, ierr)

    ! 22-24. MPI_Sendrecv_replace; MPI_Waitsome's indices from 1, past a null
    ! request; a communicator's name, and the world's.
    token = rank
    call MPI_Sendrecv_replace(token, 1, MPI_INTEGER, next, 30, prev, 30, MPI_COMM_WORLD, status, &
                              ierr)
    results(22) = token * 100 + status(MPI_SOURCE)
    call MPI_Irecv(pair(1), 1, MPI_INTEGER, prev, 31, MPI_COMM_WORLD, requests(1), ierr)
    requests(2) = MPI_REQUEST_NULL
    call MPI_Isend(rank, 1, MPI_INTEGER, next, 31, MPI_COMM_WORLD, requests(3), ierr)
    count = 0
    index = 0
    do
        call MPI_Waitsome(3, requests, got, idx, statuses, ierr)
        if (got == MPI_UNDEFINED) exit
        do i = 1, got
            index = index + idx(i)
            count = count + 1
        end do
    end do
    results(23) = pair(1) * 1000 + index * 10 + count
    call MPI_Comm_dup(MPI_COMM_WORLD, first, ierr)
    call MPI_Comm_set_name(first, 'ring', ierr)
    call MPI_Comm_get_name(first, cname, clen, ierr)
    results(24) = clen * 10 + merge(1, 0, cname == 'ring')
    call MPI_Comm_get_name(MPI_COMM_WORLD, cname, clen, ierr)
    results(24) = results(24) + 1000 * merge(1, 0, cname(1:clen) == 'MPI_COMM_WORLD')

    ! 25. An error handler of the program's, called on a send to no rank.
    call MPI_Comm_create_errhandler(name_error, handler, ierr)
    call MPI_Comm_set_errhandler(first, handler, ierr)
    call MPI_Send(token, 1, MPI_INTEGER, size + 5, 0, first, ierr)
    call MPI_Comm_get_name(first, cname, clen, ierr)
    results(25) = merge(1, 0, cname == 'handled')
    call MPI_Errhandler_free(handler, ierr)
    call MPI_Comm_free(first, ierr)

    ! Rank 0 prints every rank's results in order.
    call MPI_Gather(results, 25, MPI_INTEGER, table, 25, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        print '(a, i0, a, i0)', 'ranks ', size, ', thread level ', provided
        do i = 0, size - 1
            print '(a, i0, a, 25(1x, i0))', 'rank ', i, ':', table(:, i + 1)
        end do
    end if
    call MPI_Finalize(ierr)
end program virt_f

! The largest absolute value: the operation of result 16.
subroutine maxabs(invec, inoutvec, len, datatype)
    implicit none
    integer :: len, datatype, i
    integer :: invec(len), inoutvec(len)
    do i = 1, len
        inoutvec(i) = max(abs(invec(i)), abs(inoutvec(i)))
    end do
end subroutine maxabs

! The copy of result 20's attribute: its value plus 100 times the keyval's
! extra state.
subroutine plus_copy(oldcomm, keyval, extra_state, value_in, value_out, flag, ierror)
    use mpi
    implicit none
    integer :: oldcomm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, value_in, value_out
    logical :: flag
    value_out = value_in + 100 * extra_state
    flag = .true.
    ierror = MPI_SUCCESS
end subroutine plus_copy

! The error handler of result 25: it names the communicator.
subroutine name_error(comm, code)
    use mpi
    implicit none
    integer :: comm, code, ierror
    call MPI_Comm_set_name(comm, 'handled', ierror)
end subroutine name_error
