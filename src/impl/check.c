/* The process-MPI check shared by every implementation file. */
#include "impl/check.h"

#include <dlfcn.h>
#include <stdio.h>

/* The shared object that provides 'symbol' in the process's global scope. */
static int provider(const char *symbol, Dl_info *info)
{
    void *address = dlsym(RTLD_DEFAULT, symbol);
    return address && dladdr(address, info) && info->dli_fbase;
}

int tdm_impl_check_marker(const char *family, const char *marker, char *msg, size_t size)
{
    Dl_info mpi, ours;
    int have_mpi = provider("PMPI_Init", &mpi);
    if (have_mpi && provider(marker, &ours) && mpi.dli_fbase == ours.dli_fbase)
        return 0;
    snprintf(msg, size,
             "this libtandem was built for %s, but the program runs with the MPI library %s; "
             "use the libtandem built for that MPI (tandem run and tandem exec pick it)",
             family, have_mpi && mpi.dli_fname ? mpi.dli_fname : "(unknown)");
    return -1;
}
