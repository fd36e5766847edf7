! MPI_INIT (not MPI_INIT_THREAD) from Fortran: the thread level the program sees.
program f_init
  implicit none
  include 'mpif.h'
  integer :: ierr, level, rank
  logical :: is_main
  call MPI_Init(ierr)
  call MPI_Query_thread(level, ierr)
  call MPI_Is_thread_main(is_main, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (rank == 0) print '(A, I0, A, L1)', 'query_thread ', level, ' is_thread_main ', is_main
  call MPI_Finalize(ierr)
end program f_init
