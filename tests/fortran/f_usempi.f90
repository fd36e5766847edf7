! Fortran through the mpi module; the body is shared with f_mpifh.f90.
program f_usempi
  use mpi
  implicit none
  include 'body.inc'
end program f_usempi
