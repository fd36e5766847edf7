/* Unit tests of the collective algorithm selection (no MPI): the built-in
   rules, and a tuning file with good and bad lines. */
#include <stdio.h>
#include <string.h>

#include "coll/select.h"
#include "unit.h"

static char warnings[16][512];
static int nwarnings;

static void collect(void *context, const char *message)
{
    (void)context;
    if (nwarnings < 16)
        snprintf(warnings[nwarnings++], sizeof warnings[0], "%s", message);
}

/* Rules from 'text' (a tuning file's), warnings collected. */
static int tune(const char *text)
{
    nwarnings = 0;
    return tdm_coll_tuning_parse(text, "tune.txt", collect, NULL);
}

static void builtin_rules(void)
{
    tdm_coll_tuning_clear();
    /* Among the algorithms that send messages. */
    EXPECT(tdm_coll_default_messages(TDM_COLL_BCAST, 1 << 20, 4) == TDM_ALG_BINOMIAL);
    EXPECT(tdm_coll_default_messages(TDM_COLL_BCAST, 1 << 20, 8) == TDM_ALG_SCATTER_ALLGATHER);
    EXPECT(tdm_coll_default_messages(TDM_COLL_BCAST, 1024, 64) == TDM_ALG_BINOMIAL);
    EXPECT(tdm_coll_default_messages(TDM_COLL_SCATTER, 100, 4) == TDM_ALG_BINOMIAL);
    EXPECT(tdm_coll_default_messages(TDM_COLL_GATHER, 1 << 20, 4) == TDM_ALG_FLAT);
    /* recursive doubling only for a power of two of ranks */
    EXPECT(tdm_coll_default_messages(TDM_COLL_ALLGATHER, 64, 4) == TDM_ALG_RECURSIVE_DOUBLING);
    EXPECT(tdm_coll_default_messages(TDM_COLL_ALLGATHER, 64, 3) == TDM_ALG_BRUCK);
    EXPECT(tdm_coll_default_messages(TDM_COLL_ALLGATHER, 1 << 20, 3) == TDM_ALG_RING);
    EXPECT(tdm_coll_default_messages(TDM_COLL_ALLGATHER, 1 << 20, 4) == TDM_ALG_RING);
    EXPECT(tdm_coll_default_messages(TDM_COLL_ALLREDUCE, 8, 4) == TDM_ALG_RECURSIVE_DOUBLING);
    EXPECT(tdm_coll_default_messages(TDM_COLL_ALLREDUCE, 1 << 22, 4) ==
           TDM_ALG_REDUCE_SCATTER_ALLGATHER);
    /* The choice: the shared-memory slots on more than 2 ranks for the
       collectives that have a shared form, messages on 2 ranks. */
    EXPECT(tdm_coll_select(TDM_COLL_BCAST, 1 << 20, 4) == TDM_ALG_SHARED);
    EXPECT(tdm_coll_select(TDM_COLL_BCAST, 1 << 20, 2) == TDM_ALG_BINOMIAL);
    EXPECT(tdm_coll_select(TDM_COLL_SCATTER, 100, 3) == TDM_ALG_SHARED);
    EXPECT(tdm_coll_select(TDM_COLL_SCATTER, 100, 2) == TDM_ALG_BINOMIAL);
    EXPECT(tdm_coll_select(TDM_COLL_GATHER, 100, 4) == TDM_ALG_SHARED);
    EXPECT(tdm_coll_select(TDM_COLL_ALLGATHER, 64, 4) == TDM_ALG_SHARED);
    EXPECT(tdm_coll_select(TDM_COLL_ALLREDUCE, 8, 4) == TDM_ALG_SHARED);
    EXPECT(tdm_coll_select(TDM_COLL_ALLREDUCE, 1 << 22, 2) == TDM_ALG_RECURSIVE_DOUBLING);
    EXPECT(tdm_coll_select(TDM_COLL_ALLTOALL, 32 * 1024, 4) == TDM_ALG_LINEAR);
    EXPECT(tdm_coll_select(TDM_COLL_ALLTOALL, 32 * 1024 + 1, 4) == TDM_ALG_PAIRWISE);
    EXPECT(tdm_coll_select(TDM_COLL_REDUCE_SCATTER, 8, 4) == TDM_ALG_PAIRWISE);
    /* the built-in rule chooses shared exactly where a tuning file may name it */
    for (int kind = 0; kind < TDM_COLL_KINDS; kind++) {
        char line[64];
        snprintf(line, sizeof line, "%s shared\n", tdm_coll_kind_name((tdm_coll_kind)kind));
        EXPECT((tune(line) == 0) ==
               (tdm_coll_default((tdm_coll_kind)kind, 64, 4) == TDM_ALG_SHARED));
    }
    tdm_coll_tuning_clear();
    for (int kind = 0; kind < TDM_COLL_KINDS; kind++)
        for (int ranks = 1; ranks <= 64; ranks *= 2)
            EXPECT(tdm_coll_default_messages((tdm_coll_kind)kind, 4096, ranks) != TDM_ALG_SHARED);
    /* shared chosen by a line without conditions, at every size; refused by
       the collectives without that form */
    EXPECT(tune("bcast shared\nalltoall shared\n") == 1);
    EXPECT(tdm_coll_select(TDM_COLL_BCAST, 1 << 20, 2) == TDM_ALG_SHARED);
    EXPECT(tdm_coll_select(TDM_COLL_BCAST, 1, 64) == TDM_ALG_SHARED);
    EXPECT(nwarnings == 1 &&
           strstr(warnings[0], "tune.txt:2: alltoall takes one of pairwise|linear after its name, "
                               "not 'shared'"));
    tdm_coll_tuning_clear();
}

static void tuning_file(void)
{
    nwarnings = 0;
    const char *text = "# a comment line\n"
                       "\n"
                       "bcast     flat       bytes=-4k  ranks=2-4   # small, few ranks\n"
                       "bcast     scatter_allgather bytes=1m-\n"
                       "allreduce ring       bytes=64k-1m\n"
                       "alltoall  linear     ranks=3\n"
                       "broadcast binomial\n"             /* unknown collective */
                       "scatter   ring\n"                 /* not a scatter algorithm */
                       "gather    auto\n"                 /* auto is no algorithm */
                       "gather    flat       size=3\n"    /* unknown condition */
                       "gather    flat       bytes=9-2\n" /* empty range */
                       "gather    flat       bytes=12q\n" /* bad size */
                       "allgather\n";                     /* no algorithm */
    int got = tdm_coll_tuning_parse(text, "tune.txt", collect, NULL);
    EXPECT(got == 7);
    EXPECT(nwarnings == 7);
    EXPECT(strstr(warnings[0], "tune.txt:7: unknown collective 'broadcast'") != NULL);
    EXPECT(strstr(warnings[0], "accepted: bcast, scatter") != NULL);
    EXPECT(strstr(warnings[1], "tune.txt:8: scatter takes one of binomial|flat|shared") != NULL);
    EXPECT(strstr(warnings[1], "not 'ring'") != NULL);
    EXPECT(strstr(warnings[2], ":9:") != NULL && strstr(warnings[2], "not 'auto'") != NULL);
    EXPECT(strstr(warnings[3], ":10: 'size=3' is not a condition") != NULL);
    EXPECT(strstr(warnings[4], ":11: 'bytes=9-2'") != NULL);
    EXPECT(strstr(warnings[5], ":12: 'bytes=12q'") != NULL);
    EXPECT(strstr(warnings[6], ":13: allgather takes one of ring|recursive_doubling") != NULL);
    EXPECT(strstr(warnings[6], "the line is ignored") != NULL);

    /* first match wins; outside every line, the built-in rule */
    EXPECT(tdm_coll_select(TDM_COLL_BCAST, 4096, 2) == TDM_ALG_FLAT);
    EXPECT(tdm_coll_select(TDM_COLL_BCAST, 4097, 2) == TDM_ALG_BINOMIAL);
    EXPECT(tdm_coll_select(TDM_COLL_BCAST, 100, 5) == TDM_ALG_SHARED);
    EXPECT(tdm_coll_select(TDM_COLL_BCAST, 1 << 20, 2) == TDM_ALG_SCATTER_ALLGATHER);
    EXPECT(tdm_coll_select(TDM_COLL_ALLREDUCE, 64 * 1024, 4) == TDM_ALG_RING);
    EXPECT(tdm_coll_select(TDM_COLL_ALLREDUCE, (1 << 20) + 1, 4) == TDM_ALG_SHARED);
    EXPECT(tdm_coll_select(TDM_COLL_ALLREDUCE, (1 << 20) + 1, 2) == TDM_ALG_RECURSIVE_DOUBLING);
    EXPECT(tdm_coll_select(TDM_COLL_ALLTOALL, 1 << 20, 3) == TDM_ALG_LINEAR);
    EXPECT(tdm_coll_select(TDM_COLL_ALLTOALL, 1 << 20, 4) == TDM_ALG_PAIRWISE);

    /* a bad line chooses nothing: the built-in rule, as without it */
    EXPECT(tdm_coll_select(TDM_COLL_SCATTER, 100, 2) == TDM_ALG_BINOMIAL);

    /* the files of ctest's algs_* sets: every algorithm a collective accepts,
       forced at every size and number of ranks */
    EXPECT(tune("bcast scatter_allgather\nscatter binomial\ngather binomial\n"
                "allgather recursive_doubling\nalltoall linear\nallreduce ring\n"
                "reduce_scatter ring\n") == 0);
    EXPECT(tdm_coll_select(TDM_COLL_BCAST, 1, 2) == TDM_ALG_SCATTER_ALLGATHER);
    EXPECT(tdm_coll_select(TDM_COLL_ALLREDUCE, 1 << 30, 64) == TDM_ALG_RING);
    EXPECT(tdm_coll_select(TDM_COLL_REDUCE_SCATTER, 8, 4) == TDM_ALG_RING);
    EXPECT(tune("allgather bruck\nallreduce reduce_scatter_allgather\n") == 0);
    EXPECT(tdm_coll_select(TDM_COLL_ALLGATHER, 64, 4) == TDM_ALG_BRUCK);
    EXPECT(tdm_coll_select(TDM_COLL_ALLREDUCE, 8, 2) == TDM_ALG_REDUCE_SCATTER_ALLGATHER);
    tdm_coll_tuning_clear();
}

static void missing_file(void)
{
    nwarnings = 0;
    EXPECT(tdm_coll_tuning_load("/nonexistent/tune.txt", collect, NULL) == 1);
    EXPECT(nwarnings == 1 && strstr(warnings[0], "cannot read /nonexistent/tune.txt") != NULL);
    FILE *f = fopen("test_coll_select.tune", "w");
    EXPECT(f != NULL);
    if (f) {
        fputs("gather binomial bytes=1m-\n", f);
        fclose(f);
        EXPECT(tdm_coll_tuning_load("test_coll_select.tune", collect, NULL) == 0);
        EXPECT(tdm_coll_select(TDM_COLL_GATHER, 1 << 21, 4) == TDM_ALG_BINOMIAL);
        remove("test_coll_select.tune");
    }
    tdm_coll_tuning_clear();
}

int main(void)
{
    builtin_rules();
    tuning_file();
    missing_file();
    EXPECT(strcmp(tdm_coll_alg_name(TDM_ALG_REDUCE_SCATTER_ALLGATHER),
                  "reduce_scatter_allgather") == 0);
    EXPECT(strcmp(tdm_coll_kind_name(TDM_COLL_REDUCE_SCATTER), "reduce_scatter") == 0);
    EXPECT(strcmp(tdm_coll_alg_name(TDM_ALG_BRUCK), "bruck") == 0);
    UNIT_REPORT();
    return failures != 0;
}
