/* Computes for a while with nothing in flight (the progress thread must
   sleep); prints a result that does not depend on Tandem. */
#include "testlib.h"

int main(int argc, char **argv)
{
    int rank, size, left, right;
    tinit(&argc, &argv, &rank, &size, &left, &right);
    enum { N = 1 << 16 };
    static double a[N];
    for (int sweep = 0; sweep < 3000; sweep++)
        for (int i = 0; i < N; i++)
            a[i] = a[i] * 0.5 + i;
    tlog("computed %.1f", a[N - 1]);
    int rc = tfinish();
    MPI_Finalize();
    return rc;
}
