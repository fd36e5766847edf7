/* The public API of tandem.h, for a program linked with Tandem (not preloaded). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "tandem.h"

int main(int argc, char **argv)
{
    int before = tandem_active();
    MPI_Init(&argc, &argv);
    int during = tandem_active();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    int after = tandem_active();
    if (rank == 0)
        printf("tandem %s for %s: active before %d, during %d, after %d\n", tandem_version(),
               tandem_mpi_family(), before, during, after);
    return strcmp(tandem_version(), "0.1.0") == 0 && !before && during && !after ? 0 : 1;
}
