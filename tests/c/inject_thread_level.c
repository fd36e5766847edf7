/* Fault injection: preloaded after libtandem, this library makes the MPI
   library grant at most MPI_THREAD_SERIALIZED, as an MPI built without thread
   support would. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided);

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int (*real)(int *, char ***, int, int *) =
        (int (*)(int *, char ***, int, int *))dlsym(RTLD_NEXT, "PMPI_Init_thread");
    int rc = real(argc, argv, required, provided);
    if (*provided > MPI_THREAD_SERIALIZED)
        *provided = MPI_THREAD_SERIALIZED;
    return rc;
}

int PMPI_Query_thread(int *provided);

/* What the library reports afterwards agrees with what it granted. */
int PMPI_Query_thread(int *provided)
{
    int (*real)(int *) = (int (*)(int *))dlsym(RTLD_NEXT, "PMPI_Query_thread");
    int rc = real(provided);
    if (rc == MPI_SUCCESS && *provided > MPI_THREAD_SERIALIZED)
        *provided = MPI_THREAD_SERIALIZED;
    return rc;
}
