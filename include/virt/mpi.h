/*
 * The mpi.h of a program built with `tandem cc` (this directory comes first
 * on its include path): the real MPI's header, then each MPI function the
 * virtual-rank runtime implements mapped to its TMPI_* function, each one it
 * does not support mapped to a compile-time error naming it, and main
 * renamed to the entry every virtual rank runs (as AMPI does). Datatypes,
 * operations and statuses stay the real MPI's.
 */
#ifndef TANDEM_VIRT_MPI_H
#define TANDEM_VIRT_MPI_H

#include_next <mpi.h>

#include "../tmpi.h"
#include "gen_names.h"

/* The program's main, whatever its parameters: in C declared without them
   so that both int main(void) and int main(int, char **) agree with it; in
   C++ (tandem c++) int main(int, char **) gets C's linkage from this
   declaration, and int main() stays a C++ function that the process's main
   finds by its mangled name (src/virt/main.c). */
#ifdef __cplusplus
extern "C" int TMPI_Main(int, char **);
#else
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
int TMPI_Main();
#pragma GCC diagnostic pop
#endif
#define main TMPI_Main

#endif
