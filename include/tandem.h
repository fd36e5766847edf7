/*
 * Tandem: background progress for the nonblocking calls of unmodified MPI programs.
 *
 * The library works without any change to the program (it intercepts MPI through
 * the profiling interface). This header is the optional public API for programs
 * that want to ask Tandem about itself.
 */
#ifndef TANDEM_H
#define TANDEM_H

#ifdef __cplusplus
extern "C" {
#endif

#define TANDEM_VERSION_MAJOR 0
#define TANDEM_VERSION_MINOR 1
#define TANDEM_VERSION_PATCH 0

/* The version of the loaded library, "MAJOR.MINOR.PATCH". Callable at any time. */
const char *tandem_version(void);

/* The MPI implementation this build of Tandem was compiled against,
   "Open MPI" or "MPICH" (or "MPI" for another one). Callable at any time. */
const char *tandem_mpi_family(void);

/* 1 when Tandem is active: MPI is initialised, TANDEM_DISABLE is not set and the
   MPI library granted MPI_THREAD_MULTIPLE. 0 before MPI_Init, after
   MPI_Finalize, and in pass-through mode. */
int tandem_active(void);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_H */
