/*
 * What a program learns of MPI_COMM_WORLD: its size and ranks, its group,
 * how it compares with copies of itself, its name, its attributes, its error
 * handler, the statuses of messages on it, and the communicators made from
 * it (split by host, intercommunicators, Cartesian). Run with Tandem's
 * progress processes (TANDEM_GHOSTS, tests/compare.py --ghosts) the output
 * must be that of a job without them.
 */
#include "testlib.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tlog("size %d", size);

    /* the group, and ranks translated through it */
    MPI_Group group, dup_group;
    int group_size, result;
    MPI_Comm_group(MPI_COMM_WORLD, &group);
    MPI_Group_size(group, &group_size);
    check(group_size == size);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_group(dup, &dup_group);
    int last = size - 1, translated = -1;
    MPI_Group_translate_ranks(group, 1, &last, dup_group, &translated);
    check(translated == last);
    MPI_Group_compare(group, dup_group, &result);
    check(result == MPI_IDENT);
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &result);
    check(result == MPI_IDENT);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
    check(result == MPI_CONGRUENT);
    MPI_Comm_compare(dup, MPI_COMM_WORLD, &result);
    check(result == MPI_CONGRUENT);
    int inter = -1;
    MPI_Comm_test_inter(MPI_COMM_WORLD, &inter);
    check(inter == 0);

    /* its name and attributes */
    char name[MPI_MAX_OBJECT_NAME];
    int length = 0, flag = 0;
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &length);
    tlog("name %s", name);
    int *tag_ub = NULL, *wtime_global = NULL, *universe = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    check(flag && *tag_ub >= 32767);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wtime_global, &flag);
    tlog("wtime_is_global attribute %s", flag ? "present" : "absent");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
    check(!flag || *universe >= 1); /* slots: fewer than the ranks when oversubscribed */
    int keyval, value = 42, *got = NULL;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &value);
    MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &got, &flag);
    check(flag && got == &value);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
    MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &got, &flag);
    check(!flag);
    MPI_Comm_free_keyval(&keyval);

    /* its error handler: a send to a rank past the last returns an error */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler handler;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler);
    check(handler == MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&handler);
    int byte = 0, error_class = MPI_SUCCESS;
    int rc = MPI_Send(&byte, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &error_class);
    tlog("send to rank %d: %s", size, error_class == MPI_ERR_RANK ? "MPI_ERR_RANK" : "other");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* statuses: every rank sends its rank to rank 0, received from any source */
    if (rank == 0) {
        int seen = 0;
        for (int i = 1; i < size; i++) {
            MPI_Status status;
            int from = -1;
            MPI_Recv(&from, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &status);
            check(status.MPI_SOURCE == from);
            seen += from;
        }
        tlog("received from ranks summing to %d", seen);
    } else {
        MPI_Send(&rank, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    }
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(sum == size * (size - 1) / 2);

    /* communicators made from it */
    MPI_Comm host, half, cart;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
    int host_size;
    MPI_Comm_size(host, &host_size);
    tlog("host size %d", host_size);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    if (size >= 2) {
        MPI_Comm between;
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &between);
        int remote = 0;
        MPI_Comm_remote_size(between, &remote);
        tlog("intercommunicator to %d ranks", remote);
        MPI_Comm_free(&between);
    }
    int dims[1] = {size}, periods[1] = {1}, mapped = -1;
    MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &mapped);
    check(mapped == rank);
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    int left, right;
    MPI_Cart_shift(cart, 0, 1, &left, &right);
    tlog("ring %d <- %d -> %d", left, rank, right);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&half);
    MPI_Comm_free(&host);
    MPI_Comm_free(&dup);
    MPI_Group_free(&group);
    MPI_Group_free(&dup_group);
    int failed = tfinish();
    MPI_Finalize();
    return failed;
}
