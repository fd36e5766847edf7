/* The thread level the application sees: argv[1] is none (MPI_Init), single,
   funneled, serialized or multiple (MPI_Init_thread). */
#include "testlib.h"

int main(int argc, char **argv)
{
    static const char *const names[] = {"single", "funneled", "serialized", "multiple"};
    static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                 MPI_THREAD_MULTIPLE};
    const char *want = argc > 1 ? argv[1] : "none";
    int provided = -1, queried = -1, main_thread = -1;
    int required = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(want, names[i]) == 0)
            required = levels[i];
    if (required < 0)
        MPI_Init(&argc, &argv);
    else
        MPI_Init_thread(&argc, &argv, required, &provided);
    MPI_Query_thread(&queried);
    MPI_Is_thread_main(&main_thread);
    for (int i = 0; i < 4; i++) {
        if (provided == levels[i])
            tlog("provided %s", names[i]);
        if (queried == levels[i])
            tlog("query_thread %s", names[i]);
    }
    check(required < 0 || queried == provided);
    tlog("is_thread_main %d", main_thread);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
