/*
 * The point-to-point component Open MPI selected at MPI_Init ("ob1", "ucx"),
 * read from its mca_pml_base_selected_component: an mca_base_component_t of
 * Open MPI 4.1, the type name at byte 40 and the component's name at 84. NULL
 * where that is not what it holds (another layout, another MPI, before
 * MPI_Init). Header-only, for libtandem (impl/openmpi.c), tandem-probe and the
 * tests, which link the MPI library but not Tandem.
 */
#ifndef TDM_IMPL_OMPI_PML_H
#define TDM_IMPL_OMPI_PML_H

#include <string.h>

extern char mca_pml_base_selected_component[] __attribute__((weak));

static inline const char *tdm_ompi_pml_selected(void)
{
    const char *component = mca_pml_base_selected_component;
    if (!component || strncmp(component + 40, "pml", 4) != 0 || !memchr(component + 84, 0, 64))
        return NULL;
    return component + 84;
}

#endif
