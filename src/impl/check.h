#ifndef TDM_IMPL_CHECK_H
#define TDM_IMPL_CHECK_H

#include <stddef.h>

/* Succeeds when the library providing PMPI_Init also provides 'marker', a
   function only the 'family' implementation exports (a function: data symbols may be copied into
   the executable). */
int tdm_impl_check_marker(const char *family, const char *marker, char *msg, size_t size);

#endif
