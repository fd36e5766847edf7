/* The process-MPI check shared by every implementation file. */
#include "impl/check.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static const char *provider(const char *symbol)
{
    Dl_info info;
    void *address = dlsym(RTLD_DEFAULT, symbol);
    if (!address || !dladdr(address, &info) || !info.dli_fname)
        return NULL;
    return info.dli_fname;
}

int tdm_impl_check_marker(const char *family, const char *marker, char *msg, size_t size)
{
    const char *mpi = provider("PMPI_Init");
    const char *ours = provider(marker);
    if (mpi && ours && strcmp(mpi, ours) == 0)
        return 0;
    snprintf(msg, size,
             "this libtandem was built for %s, but the program runs with the MPI library %s; "
             "use the libtandem built for that MPI (tandem run and tandem exec pick it)",
             family, mpi ? mpi : "(unknown)");
    return -1;
}
