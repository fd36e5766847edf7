/*
 * Groups, MPI_Comm_create and communicators' attributes for the virtual
 * ranks' transparency test (tests/virt_compare.py): the same output with N
 * processes as with N virtual ranks. Rank 0 prints every result. No global
 * variable is written: the virtual ranks of a process share them.
 */
#include <stdio.h>
#include <string.h>

#include "virt_testlib.h"

/* The attribute callbacks' count of calls, the rank's own (their extra
   state). */
typedef struct {
    long copies, deletes;
    int rank;
} calls;

/* A copy holds the value plus 100, in memory of its own. */
static int copy_plus(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval;
    int *made = malloc(sizeof *made);
    *made = *(int *)in + 100;
    *(int **)out = made;
    *flag = 1;
    ((calls *)extra)->copies++;
    return MPI_SUCCESS;
}

static int delete_free(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval;
    free(value);
    ((calls *)extra)->deletes++;
    return MPI_SUCCESS;
}

/* MPI_COMM_SELF's attribute, deleted in MPI_Finalize: rank 0 says so. */
static int at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    if (*(int *)value == 0)
        printf("MPI_COMM_SELF's attribute deleted in MPI_Finalize\n");
    fflush(stdout);
    free(value);
    return MPI_SUCCESS;
}

/* The predefined attributes (what every MPI agrees on), a keyval of the
   program's copied by MPI_Comm_dup and deleted by set, delete and free,
   MPI's own null and dup callbacks. */
static void attributes(int rank, int size)
{
    int *v = NULL, flag = 0;
    long seen[4];
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
    seen[0] = flag && *v >= 32767;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag);
    seen[1] = flag && *v == MPI_PROC_NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag);
    seen[2] = flag && (*v == MPI_ANY_SOURCE || *v == rank);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag);
    seen[3] = flag && (*v == 0 || *v == 1);
    print_all(rank, size, "predefined attributes (tag_ub, host, io, wtime_is_global)", seen, 4);

    calls counted = {0, 0, rank};
    int plus, nothing, same, shared = rank * 7;
    MPI_Comm_create_keyval(copy_plus, delete_free, &plus, &counted);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &nothing, NULL);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &same, NULL);
    MPI_Comm first, second;
    MPI_Comm_dup(MPI_COMM_WORLD, &first);
    int *mine = malloc(sizeof *mine);
    *mine = rank;
    MPI_Comm_set_attr(first, plus, mine);
    MPI_Comm_set_attr(first, nothing, &shared);
    MPI_Comm_set_attr(first, same, &shared);
    MPI_Comm_dup(first, &second);
    long got[8];
    int *p = NULL, *q = NULL;
    MPI_Comm_get_attr(second, plus, &p, &flag);
    got[0] = flag ? *p : -1;
    MPI_Comm_get_attr(second, nothing, &q, &flag);
    got[1] = flag;
    MPI_Comm_get_attr(second, same, &q, &flag);
    got[2] = flag && q == &shared;
    int *again = malloc(sizeof *again);
    *again = rank + 50;
    MPI_Comm_set_attr(first, plus, again); /* the value it replaces is deleted */
    MPI_Comm_get_attr(first, plus, &p, &flag);
    got[3] = flag ? *p : -1;
    MPI_Comm_delete_attr(first, plus);
    MPI_Comm_get_attr(first, plus, &p, &flag);
    got[4] = flag * 1000 + counted.copies * 10 + counted.deletes;
    MPI_Comm_free(&second); /* deletes its copy */
    MPI_Comm_free_keyval(&plus);
    got[5] = plus == MPI_KEYVAL_INVALID;
    got[6] = counted.deletes;
    MPI_Comm_free(&first);
    MPI_Comm_free_keyval(&nothing);
    MPI_Comm_free_keyval(&same);
    int keyval, *last = malloc(sizeof *last);
    *last = rank;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &keyval, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, keyval, last);
    MPI_Comm_get_attr(MPI_COMM_SELF, keyval, &p, &flag);
    got[7] = flag && p == last;
    print_all(rank, size,
              "attributes (copied, null copy, dup copy, replaced, deleted, keyval freed, "
              "deletes, on self)",
              got, 8);
}

/* The world ranks of g's members, in its order, as one number (base 10,
   each plus 1), and its size times 100 plus this rank's rank in it (99
   where it is not a member). */
static long members(MPI_Group g, MPI_Group world, long *size_rank)
{
    int n, me, w;
    MPI_Group_size(g, &n);
    MPI_Group_rank(g, &me);
    long digits = 0;
    for (int i = 0; i < n; i++) {
        MPI_Group_translate_ranks(g, 1, &i, world, &w);
        digits = digits * 10 + w + 1;
    }
    *size_rank = n * 100 + (me == MPI_UNDEFINED ? 99 : me);
    return digits;
}

static char comparison(MPI_Group a, MPI_Group b)
{
    int result;
    MPI_Group_compare(a, b, &result);
    return result == MPI_IDENT     ? 'I'
           : result == MPI_SIMILAR ? 'S'
           : result == MPI_UNEQUAL ? 'U'
                                   : '?';
}

/* A communicator of g made by its members alone: its rank, size, the sum
   of its members' world ranks and its rank 0's world rank. */
static void create_group(int rank, int size, MPI_Group g, int tag, const char *what)
{
    long got[4] = {-1, -1, -1, -1};
    int me;
    MPI_Group_rank(g, &me);
    if (me != MPI_UNDEFINED) {
        MPI_Comm c;
        MPI_Comm_create_group(MPI_COMM_WORLD, g, tag, &c);
        int cr, cs, root = rank;
        MPI_Comm_rank(c, &cr);
        MPI_Comm_size(c, &cs);
        long mine = rank, sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, c);
        MPI_Bcast(&root, 1, MPI_INT, 0, c);
        got[0] = cr;
        got[1] = cs;
        got[2] = sum;
        got[3] = root;
        MPI_Comm_free(&c);
    }
    print_all(rank, size, what, got, 4);
}

/* An error handler of the program's: it names the communicator after the
   error's class (no global: the virtual ranks of a process share them). */
static void name_error(MPI_Comm *comm, int *code, ...)
{
    int cls;
    char text[64];
    MPI_Error_class(*code, &cls);
    snprintf(text, sizeof text, "handled %s", cls == MPI_ERR_RANK ? "rank" : "other");
    MPI_Comm_set_name(*comm, text);
}

/* The communicator calls around the groups': comparisons, names, the
   shared-memory split, the error handler, what there is no inter- or
   spawned communicator for. */
static void communicators(int rank, int size)
{
    MPI_Comm dup, reversed, evens, shared;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &reversed);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &evens);
    int r[4];
    long cmp[5];
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &r[0]);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &r[1]);
    MPI_Comm_compare(MPI_COMM_WORLD, reversed, &r[2]);
    MPI_Comm_compare(evens, MPI_COMM_WORLD, &r[3]);
    for (int i = 0; i < 4; i++)
        cmp[i] = r[i] == MPI_IDENT ? 0 : r[i] == MPI_CONGRUENT ? 1 : r[i] == MPI_SIMILAR ? 2 : 3;
    int shared_rank, shared_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    MPI_Comm_rank(shared, &shared_rank);
    MPI_Comm_size(shared, &shared_size);
    cmp[4] = shared_size * 100 + shared_rank;
    print_all(rank, size, "compare (ident, dup, reversed, evens) and shared split", cmp, 5);

    char name[MPI_MAX_OBJECT_NAME];
    int length;
    MPI_Comm_set_name(dup, "the duplicate");
    MPI_Comm_get_name(dup, name, &length);
    if (rank == 0)
        printf("names: %s (%d)", name, length);
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &length);
    if (rank == 0)
        printf(", %s", name);
    MPI_Comm_get_name(MPI_COMM_SELF, name, &length);
    if (rank == 0)
        printf(", %s\n", name);

    long other[5];
    MPI_Errhandler handler;
    MPI_Comm_get_errhandler(dup, &handler);
    other[0] = handler == MPI_ERRORS_ARE_FATAL;
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(dup, &handler);
    other[0] += 10 * (handler == MPI_ERRORS_RETURN);
    int inter = -1;
    MPI_Comm_test_inter(dup, &inter);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    other[1] = inter * 10 + (parent == MPI_COMM_NULL);
    MPI_Info info;
    MPI_Comm_set_info(dup, MPI_INFO_ENV);
    other[2] = MPI_Comm_get_info(dup, &info) == MPI_SUCCESS && info != MPI_INFO_NULL;
    MPI_Info_free(&info);
    other[3] = MPI_Pcontrol(1) == MPI_SUCCESS;
    MPI_Comm none;
    MPI_Comm_split_type(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &none);
    other[4] = none == MPI_COMM_NULL;
    if (none != MPI_COMM_NULL)
        MPI_Comm_free(&none);
    print_all(rank, size, "errhandler, inter and parent, info, pcontrol, undefined split", other,
              5);

    MPI_Errhandler mine, got;
    MPI_Comm_create_errhandler(name_error, &mine);
    MPI_Comm_set_errhandler(dup, mine);
    MPI_Comm_get_errhandler(dup, &got);
    long handled[4];
    handled[0] = got == mine;
    int one = 1, cls = 0;
    int err = MPI_Send(&one, 1, MPI_INT, size + 5, 0, dup);
    MPI_Error_class(err, &cls);
    MPI_Comm_get_name(dup, name, &length);
    handled[1] = (cls == MPI_ERR_RANK) * 10 + (strcmp(name, "handled rank") == 0);
    MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
    MPI_Comm_get_name(dup, name, &length);
    handled[2] = strcmp(name, "handled other") == 0;
    MPI_Comm inherits;
    MPI_Comm_dup(dup, &inherits); /* the handler goes with it */
    MPI_Comm_set_name(inherits, "");
    err = MPI_Recv(&one, 1, MPI_INT, -7, 0, inherits, MPI_STATUS_IGNORE);
    MPI_Comm_get_name(inherits, name, &length);
    handled[3] = err != MPI_SUCCESS && strcmp(name, "handled rank") == 0;
    MPI_Comm_free(&inherits);
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&mine);
    print_all(rank, size, "a handler of the program's (got, on an error, called, inherited)",
              handled, 4);
    MPI_Comm_free(&shared);
    MPI_Comm_free(&evens);
    MPI_Comm_free(&reversed);
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Group world, evens, rest;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int gsize, grank;
    MPI_Group_size(world, &gsize);
    MPI_Group_rank(world, &grank);
    /* The even ranks, last first; every rank but 0. */
    int n_even = (size + 1) / 2;
    int *list = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < n_even; i++)
        list[i] = 2 * (n_even - 1 - i);
    MPI_Group_incl(world, n_even, list, &evens);
    int zero = 0;
    MPI_Group_excl(world, 1, &zero, &rest);
    int esize, erank, rsize, rrank;
    MPI_Group_size(evens, &esize);
    MPI_Group_rank(evens, &erank);
    MPI_Group_size(rest, &rsize);
    MPI_Group_rank(rest, &rrank);
    long sizes[6] = {gsize, grank, esize, erank, rsize, rrank};
    print_all(rank, size, "group sizes and ranks (world, evens reversed, all but 0)", sizes, 6);

    /* Every world rank in the evens, and the evens in the rest. */
    int *from = malloc(sizeof(int) * (size_t)(size + 1)),
        *to = malloc(sizeof(int) * (size_t)(size + 1));
    for (int i = 0; i < size; i++)
        from[i] = i;
    from[size] = MPI_PROC_NULL;
    MPI_Group_translate_ranks(world, size + 1, from, evens, to);
    long t[2] = {0, 0};
    for (int i = 0; i <= size; i++)
        t[0] = t[0] * 3 +
               (to[i] == MPI_UNDEFINED   ? 1
                : to[i] == MPI_PROC_NULL ? 2
                                         : 0) +
               to[i] * 10 * (to[i] >= 0);
    MPI_Group_translate_ranks(evens, n_even, from, rest, to);
    for (int i = 0; i < n_even; i++)
        t[1] = t[1] * 100 + (to[i] == MPI_UNDEFINED ? 99 : to[i]);
    if (rank == 0)
        printf("translate: %ld %ld\n", t[0], t[1]);

    /* A communicator of the evens, reversed: the others get MPI_COMM_NULL. */
    MPI_Comm ecomm;
    MPI_Comm_create(MPI_COMM_WORLD, evens, &ecomm);
    long made[4] = {ecomm == MPI_COMM_NULL, -1, -1, -1};
    if (ecomm != MPI_COMM_NULL) {
        int cr, cs;
        MPI_Comm_rank(ecomm, &cr);
        MPI_Comm_size(ecomm, &cs);
        long me = rank, sum = 0;
        MPI_Allreduce(&me, &sum, 1, MPI_LONG, MPI_SUM, ecomm);
        /* A message on it: from its rank 0 to its last. */
        int v = -1;
        if (cr == 0)
            v = rank;
        MPI_Bcast(&v, 1, MPI_INT, 0, ecomm);
        made[1] = cr;
        made[2] = cs * 1000 + sum;
        made[3] = v;
        /* Its group is the evens again. */
        MPI_Group back;
        int br;
        MPI_Comm_group(ecomm, &back);
        MPI_Group_translate_ranks(back, 1, &cr, world, &br);
        made[3] = made[3] * 100 + br;
        MPI_Group_free(&back);
        MPI_Comm_free(&ecomm);
    }
    print_all(rank, size, "comm_create (null, rank, size and sum, root and world rank)", made, 4);

    /* Of a split communicator, and with the empty group. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Group hg;
    MPI_Comm_group(half, &hg);
    int hs, h0 = 0, w0 = -1;
    MPI_Group_size(hg, &hs);
    MPI_Group_translate_ranks(hg, 1, &h0, world, &w0);
    MPI_Comm none;
    MPI_Comm_create(half, MPI_GROUP_EMPTY, &none);
    long split[3] = {hs, w0, none == MPI_COMM_NULL};
    print_all(rank, size, "split group (size, its rank 0 in the world, empty)", split, 3);
    MPI_Group_free(&hg);
    MPI_Comm_free(&half);

    /* Union, intersection and difference of the reversed evens and the
       rest, compared; ranges included and excluded. */
    MPI_Group uni, inter, diff, odd_down, no_odds, both;
    MPI_Group_union(evens, rest, &uni);
    MPI_Group_intersection(evens, rest, &inter);
    MPI_Group_difference(rest, evens, &diff);
    int down[1][3] = {{size - 1, 0, -1}};
    int odds[1][3] = {{1, size - 1, 2}};
    MPI_Group_range_incl(world, 1, down, &odd_down);
    int no_range[1][3] = {{0, 0, 1}};
    if (size > 1)
        MPI_Group_range_excl(world, 1, odds, &no_odds);
    else
        MPI_Group_range_excl(world, 0, no_range, &no_odds);
    /* The evens up, then the odds down. */
    int two[2][3] = {{0, size - 1, 2}, {size - 1 - (size % 2), 1, -2}};
    if (size > 1)
        MPI_Group_range_incl(world, 2, two, &both);
    else
        MPI_Group_range_incl(world, 1, two, &both);
    MPI_Group made_groups[6] = {uni, inter, diff, odd_down, no_odds, both};
    long digits[6], size_rank[6];
    for (int i = 0; i < 6; i++)
        digits[i] = members(made_groups[i], world, &size_rank[i]);
    print_longs(rank,
                "union, intersection, difference, range_incl down, range_excl odds, two ranges",
                digits, 6);
    print_all(rank, size, "their sizes and this rank's ranks", size_rank, 6);
    if (rank == 0)
        printf("compare: world-world %c, world-union %c, evens-range_excl %c, evens-rest %c, "
               "world-range_incl down %c\n",
               comparison(world, world), comparison(world, uni), comparison(evens, no_odds),
               comparison(evens, rest), comparison(world, odd_down));

    /* Communicators made by their group's members alone: all but 0 in
       reverse order, and the evens (a rank in both makes them in order). */
    MPI_Group rest_down;
    int rd[1][3] = {{size - 1, 1, -1}};
    if (size > 1)
        MPI_Group_range_incl(world, 1, rd, &rest_down);
    else
        rest_down = MPI_GROUP_EMPTY;
    create_group(rank, size, rest_down, 7,
                 "comm_create_group all but 0 reversed (rank, size, sum, root)");
    create_group(rank, size, evens, 7, "comm_create_group evens reversed (rank, size, sum, root)");
    if (rest_down != MPI_GROUP_EMPTY)
        MPI_Group_free(&rest_down);
    for (int i = 0; i < 6; i++)
        if (made_groups[i] != MPI_GROUP_EMPTY)
            MPI_Group_free(&made_groups[i]);

    MPI_Group_free(&evens);
    MPI_Group_free(&rest);
    MPI_Group_free(&world);
    long freed = world == MPI_GROUP_NULL && evens == MPI_GROUP_NULL;
    print_all(rank, size, "freed", &freed, 1);
    attributes(rank, size);
    communicators(rank, size);
    free(list);
    free(from);
    free(to);
    MPI_Finalize();
    return 0;
}
