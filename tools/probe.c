/* Report the MPI library's version, the thread level it grants and, on Open
   MPI, the point-to-point component it selected (tandem info, tandem
   doctor). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#if defined(OPEN_MPI)
#include "impl/ompi_pml.h"
#endif

int main(int argc, char **argv)
{
    static const char *const names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                        "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    int provided = MPI_THREAD_SINGLE, len = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return 1;
    MPI_Get_library_version(version, &len);
    version[strcspn(version, "\n,")] = '\0';
    for (char *p = version; *p; p++)
        if (*p == '\t')
            *p = ' ';
    const char *level = "unknown";
    if (provided == MPI_THREAD_SINGLE)
        level = names[0];
    else if (provided == MPI_THREAD_FUNNELED)
        level = names[1];
    else if (provided == MPI_THREAD_SERIALIZED)
        level = names[2];
    else if (provided == MPI_THREAD_MULTIPLE)
        level = names[3];
    printf("MPI version: %s\n", version);
    printf("thread level granted: %s%s\n", level,
           provided == MPI_THREAD_MULTIPLE ? "" : " (Tandem runs in pass-through mode)");
#if defined(OPEN_MPI)
    if (tdm_ompi_pml_selected())
        printf("point-to-point component: %s\n", tdm_ompi_pml_selected());
#endif
    MPI_Finalize();
    return 0;
}
