! MPI_INIT (not MPI_INIT_THREAD) through the mpi_f08 module, IERROR left
! out: the thread level the program sees (as f_init.f90 through mpif.h).
program f_init_f08
  use mpi_f08
  implicit none
  integer :: level, rank
  logical :: is_main
  call MPI_Init()
  call MPI_Query_thread(level)
  call MPI_Is_thread_main(is_main)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  if (rank == 0) print '(A, I0, A, L1)', 'query_thread ', level, ' is_thread_main ', is_main
  call MPI_Finalize()
end program f_init_f08
