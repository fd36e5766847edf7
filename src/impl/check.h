#ifndef TDM_IMPL_CHECK_H
#define TDM_IMPL_CHECK_H

#include <stddef.h>

/* Succeeds when the library providing PMPI_Init also provides 'marker', a
   function only the 'family' implementation exports (a function: data symbols may be copied into
   the executable). */
int tdm_impl_check_marker(const char *family, const char *marker, char *msg, size_t size);

/* Read the MPI library's control variable 'name' through the tool interface:
   a string into text (size bytes, NUL-terminated) or an integer into *number,
   whichever its type is. Returns 0, or -1 when the library has no such
   variable or refuses. The first call opens a tool-interface session that
   stays open. After MPI_Init, application thread. */
int tdm_impl_cvar_read(const char *name, char *text, size_t size, long long *number);

/* The positive integers in the environment variables 'world_name' and
   'local_name' (a launcher's): 0, or -1 when either is missing or not one. */
int tdm_impl_env_shape(const char *world_name, const char *local_name, int *world, int *local);

#endif
