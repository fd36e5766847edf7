! Fortran through mpif.h; the body is shared with f_usempi.f90.
program f_mpifh
  implicit none
  include 'mpif.h'
  include 'body.inc'
end program f_mpifh
