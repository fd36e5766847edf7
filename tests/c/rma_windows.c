/* Windows the progress processes serve, made at once on overlapping
   communicators: each half of the world makes one (some ranks bringing no
   memory), then the whole world, then every rank one of its own, and the
   ranks use all three (lock_all puts, a fence accumulate, an exclusive lock
   on its own window), then read the attributes of the world's. Without a
   progress process that takes each window's making on a thread of its own,
   a progress process busy making the world's window while half of the ranks
   still wait in their half's would hang (TANDEM_GHOSTS=1 on 4 ranks did). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    /* a window per half, sizes 0 on odd half-ranks, disp_unit 8 */
    long *a, *b;
    MPI_Win wa, wb, ws;
    MPI_Win_allocate(hr % 2 ? 0 : 64 * sizeof(long), sizeof(long), MPI_INFO_NULL, half, &a, &wa);
    MPI_Win_allocate(100 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &b, &wb);
    long *s;
    MPI_Win_allocate(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_SELF, &s, &ws);
    for (int i = 0; i < 100; i++)
        b[i] = -1;
    for (int i = 0; hr % 2 == 0 && i < 64; i++)
        a[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    /* everyone puts its rank at index rank of rank 0 of each half's window, and of every rank in wb
     */
    long sent[64];
    MPI_Win_lock_all(0, wb);
    for (int t = 0; t < size && t < 64; t++) {
        sent[t] = 1000 * rank + t; /* untouched until the epoch ends */
        MPI_Put(&sent[t], 1, MPI_LONG, t, rank, 1, MPI_LONG, wb);
    }
    MPI_Win_unlock_all(wb);
    MPI_Win_fence(0, wa);
    long v = rank;
    MPI_Accumulate(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, wa);
    MPI_Win_fence(0, wa);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, ws);
    long w = 42;
    MPI_Put(&w, 1, MPI_LONG, 0, 3, 1, MPI_LONG, ws);
    MPI_Win_unlock(0, ws);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        if (b[r] != 1000 * r + rank)
            bad++;
    if (hr == 0) {
        long expect = -1;
        for (int r = rank % 2; r < size; r += 2)
            expect += r;
        if (a[0] != expect) {
            bad++;
            printf("rank %d: a[0]=%ld expect %ld\n", rank, a[0], expect);
        }
    }
    if (s[3] != 42)
        bad++;
    int flavor_ok = 0, *flavor, flag;
    MPI_Win_get_attr(wb, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    flavor_ok = flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE;
    void *base;
    MPI_Aint *wsz;
    int *du;
    MPI_Win_get_attr(wb, MPI_WIN_BASE, &base, &flag);
    if (base != b)
        bad++;
    MPI_Win_get_attr(wb, MPI_WIN_SIZE, &wsz, &flag);
    if (*wsz != 100 * (MPI_Aint)sizeof(long))
        bad++;
    MPI_Win_get_attr(wb, MPI_WIN_DISP_UNIT, &du, &flag);
    if (*du != sizeof(long))
        bad++;
    MPI_Group g;
    int gs;
    MPI_Win_get_group(wb, &g);
    MPI_Group_size(g, &gs);
    if (gs != size)
        bad++;
    MPI_Group_free(&g);
    MPI_Win_free(&ws);
    MPI_Win_free(&wa);
    MPI_Win_free(&wb);
    int all;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d wrong, flavor %s\n", all ? "FAILED" : "ok", all,
               flavor_ok ? "allocate" : "other");
    MPI_Comm_free(&half);
    MPI_Finalize();
    return all != 0;
}
