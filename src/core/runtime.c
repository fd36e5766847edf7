/* The process-wide state declared in runtime.h. */
#include "core/runtime.h"

#include <stdio.h>

int tdm_active;
int tdm_trace_on;
int tdm_world_rank = -1;

void tdm_trace_call(const char *function, int lang)
{
    fprintf(stderr, "tandem[%d]: trace %s (%s)\n", tdm_world_rank, function,
            lang == TDM_LANG_FORTRAN ? "Fortran" : "C");
}
