/*
 * Which algorithm runs a collective. Two sources, strongest first:
 *   1. the tuning file (TANDEM_COLL_TUNING): its first line that matches the
 *      collective, the size and the number of ranks (a line without
 *      conditions forces an algorithm);
 *   2. the built-in rule (tdm_coll_default).
 * The caller then applies the algorithm's own limits (recursive doubling
 * without a power of two of ranks runs as a ring). Every rank must choose the
 * same algorithm: the inputs are the same on every rank (the size is the one
 * every rank knows, see docs/COLLECTIVES.md), and so must the file be.
 * Nothing here needs MPI.
 */
#ifndef TDM_COLL_SELECT_H
#define TDM_COLL_SELECT_H

#include "core/config.h"

/* The collectives with a choice of algorithm. */
typedef enum {
    TDM_COLL_BCAST,
    TDM_COLL_SCATTER,
    TDM_COLL_GATHER,
    TDM_COLL_ALLGATHER,
    TDM_COLL_ALLTOALL,
    TDM_COLL_ALLREDUCE,
    TDM_COLL_REDUCE_SCATTER,
    TDM_COLL_KINDS
} tdm_coll_kind;

/* Every algorithm, by the name a tuning file uses. */
typedef enum {
    TDM_ALG_AUTO,
    TDM_ALG_BINOMIAL,
    TDM_ALG_FLAT,
    TDM_ALG_SCATTER_ALLGATHER,
    TDM_ALG_RING,
    TDM_ALG_RECURSIVE_DOUBLING,
    TDM_ALG_PAIRWISE,
    TDM_ALG_LINEAR,
    TDM_ALG_REDUCE_SCATTER_ALLGATHER,
    TDM_ALG_BRUCK,
    TDM_ALG_SHARED, /* the communicator's shared-memory slots (docs/COLLECTIVES.md) */
    TDM_ALGS
} tdm_coll_alg;

/* One line of a tuning file: 'alg' for 'kind' when bytes and ranks fall in
   the (inclusive) ranges. */
typedef struct {
    tdm_coll_kind kind;
    tdm_coll_alg alg;
    long long min_bytes, max_bytes;
    long long min_ranks, max_ranks;
} tdm_coll_rule;

/* The name of a collective ("bcast") or an algorithm ("ring"). */
const char *tdm_coll_kind_name(tdm_coll_kind kind);
const char *tdm_coll_alg_name(tdm_coll_alg alg);

/* Parse the text of a tuning file into the rules in force (replacing any).
   A bad line is skipped with a warning naming 'source', the line and what is
   accepted. Returns the number of warnings (-1 without memory). */
int tdm_coll_tuning_parse(const char *text, const char *source, tdm_config_warn_fn warn,
                          void *context);

/* Read the file at 'path' and parse it; an unreadable file is one warning. */
int tdm_coll_tuning_load(const char *path, tdm_config_warn_fn warn, void *context);

/* Forget the rules. */
void tdm_coll_tuning_clear(void);

/* The built-in rule for 'kind', a size in bytes and a number of ranks:
   shared on more than 2 ranks for the collectives that have a shared-memory
   form, else tdm_coll_default_messages. */
tdm_coll_alg tdm_coll_default(tdm_coll_kind kind, long long bytes, int ranks);

/* The built-in rule among the algorithms that send messages: what a
   collective whose choice is shared runs where the slots cannot serve (a
   communicator across nodes, data larger than a slot). Never shared. */
tdm_coll_alg tdm_coll_default_messages(tdm_coll_kind kind, long long bytes, int ranks);

/* The algorithm of 'kind' for 'bytes' and 'ranks', from the rules and the
   built-in rule; never TDM_ALG_AUTO. */
tdm_coll_alg tdm_coll_select(tdm_coll_kind kind, long long bytes, int ranks);

#endif
