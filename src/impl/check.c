/* What every implementation file shares: the process-MPI check and the
   reading of control variables. */
#include "impl/check.h"

#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The variable's value, read through an open tool-interface session. */
static int cvar_value(int index, char *text, size_t size, long long *number)
{
    char name[256], description[16];
    int name_len = sizeof name, description_len = sizeof description, verbosity, bind, scope;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    if (PMPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &enumtype, description,
                             &description_len, &bind, &scope) != MPI_SUCCESS ||
        bind != MPI_T_BIND_NO_OBJECT)
        return -1;
    MPI_T_cvar_handle handle;
    int count = 0;
    if (PMPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS)
        return -1;
    int rc = -1;
    if (type == MPI_CHAR && count > 0) {
        char *value = calloc((size_t)count + 1, 1);
        if (value && PMPI_T_cvar_read(handle, value) == MPI_SUCCESS) {
            snprintf(text, size, "%s", value);
            rc = 0;
        }
        free(value);
    } else if (type == MPI_INT && count == 1) {
        int value;
        if (PMPI_T_cvar_read(handle, &value) == MPI_SUCCESS) {
            *number = value;
            rc = 0;
        }
    }
    PMPI_T_cvar_handle_free(&handle);
    return rc;
}

int tdm_impl_cvar_read(const char *name, char *text, size_t size, long long *number)
{
    /* The session stays open for the life of the process: when MPICH 4.0.2's
       count of MPI_T sessions falls back to zero, it drops the performance
       variables registered in MPI_Init, and a program that opens its own
       session later crashes in MPI_T_pvar_get_num (seen in monitor_api). */
    static int opened;
    int provided, index;
    if (!opened && PMPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return -1;
    opened = 1;
    if (PMPI_T_cvar_get_index(name, &index) != MPI_SUCCESS)
        return -1;
    return cvar_value(index, text, size, number);
}

/* The launcher's own variables (not Tandem's settings, which only the
   configuration table reads). */
static int env_count(const char *name)
{
    const char *text = getenv(name);
    char *end = NULL;
    long value = text ? strtol(text, &end, 10) : 0;
    return text && end != text && *end == '\0' && value > 0 && value <= INT_MAX ? (int)value : -1;
}

int tdm_impl_env_shape(const char *world_name, const char *local_name, int *world, int *local)
{
    *world = env_count(world_name);
    *local = env_count(local_name);
    return *world > 0 && *local > 0 ? 0 : -1;
}
