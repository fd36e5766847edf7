/*
 * Algorithm selection (select.h): the tuning file and the built-in rules.
 */
#include "coll/select.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[TDM_COLL_KINDS] = {
    "bcast", "scatter", "gather", "allgather", "alltoall", "allreduce", "reduce_scatter"};

/* The algorithms each collective accepts, as a tuning file names them. */
static const char *const kind_algs[TDM_COLL_KINDS] = {
    "binomial|flat|scatter_allgather|shared",
    "binomial|flat|shared",
    "binomial|flat|shared",
    "ring|recursive_doubling|bruck|shared",
    "pairwise|linear",
    "recursive_doubling|reduce_scatter_allgather|ring|shared",
    "pairwise|ring"};

static const char *const alg_names[TDM_ALGS] = {"auto",
                                                "binomial",
                                                "flat",
                                                "scatter_allgather",
                                                "ring",
                                                "recursive_doubling",
                                                "pairwise",
                                                "linear",
                                                "reduce_scatter_allgather",
                                                "bruck",
                                                "shared"};

static tdm_coll_rule *rules;
static int nrules;

const char *tdm_coll_kind_name(tdm_coll_kind kind)
{
    return kind >= 0 && kind < TDM_COLL_KINDS ? kind_names[kind] : "?";
}

const char *tdm_coll_alg_name(tdm_coll_alg alg)
{
    return alg >= 0 && alg < TDM_ALGS ? alg_names[alg] : "?";
}

/* The algorithm 'name' where 'kind' accepts it, else TDM_ALG_AUTO. */
static tdm_coll_alg accepted_alg(tdm_coll_kind kind, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = kind_algs[kind]; *p;) {
        size_t n = strcspn(p, "|");
        if (n == len && strncmp(p, name, n) == 0)
            for (int a = TDM_ALG_AUTO + 1; a < TDM_ALGS; a++)
                if (strcmp(alg_names[a], name) == 0)
                    return (tdm_coll_alg)a;
        p += n;
        if (*p)
            p++;
    }
    return TDM_ALG_AUTO;
}

/* ------------------------------------------------------------ the file */

static void warn_line(tdm_config_warn_fn warn, void *context, const char *source, int line,
                      const char *what)
{
    char message[512];
    snprintf(message, sizeof message, "%s:%d: %s; the line is ignored", source, line, what);
    if (warn)
        warn(context, message);
}

/* "LO-HI", "LO-", "-HI" or "N" (sizes take k/m/g suffixes). */
static int parse_range(const char *text, int sizes, long long *lo, long long *hi)
{
    char buf[64];
    if (strlen(text) >= sizeof buf)
        return -1;
    strcpy(buf, text);
    char *dash = strchr(buf, '-');
    *lo = 0;
    *hi = LLONG_MAX;
    if (dash)
        *dash = '\0';
    const char *parts[2] = {buf, dash ? dash + 1 : buf};
    long long *out[2] = {lo, hi};
    for (int i = 0; i < 2; i++) {
        if (!*parts[i]) {
            if (!dash)
                return -1;
            continue;
        }
        if (sizes) {
            if (tdm_config_parse_size(parts[i], out[i]) != 0)
                return -1;
        } else {
            char *end;
            errno = 0;
            *out[i] = strtoll(parts[i], &end, 10);
            if (*end || errno)
                return -1;
        }
        if (*out[i] < 0)
            return -1;
    }
    return *lo <= *hi ? 0 : -1;
}

/* One line (comments and blanks already removed): 1 when it made a rule,
   0 when it is empty, -1 when it is bad (after its warning). */
static int parse_line(char *line, const char *source, int number, tdm_coll_rule *rule,
                      tdm_config_warn_fn warn, void *context)
{
    char what[400];
    const char *words[8];
    int n = 0;
    for (char *save = NULL, *w = strtok_r(line, " \t\r", &save); w;
         w = strtok_r(NULL, " \t\r", &save)) {
        if (n == 8) {
            warn_line(warn, context, source, number, "too many words");
            return -1;
        }
        words[n++] = w;
    }
    if (n == 0)
        return 0;
    int kind = 0;
    while (kind < TDM_COLL_KINDS && strcmp(words[0], kind_names[kind]) != 0)
        kind++;
    if (kind == TDM_COLL_KINDS) {
        snprintf(what, sizeof what,
                 "unknown collective '%s' (accepted: bcast, scatter, gather, allgather, "
                 "alltoall, allreduce, reduce_scatter)",
                 words[0]);
        warn_line(warn, context, source, number, what);
        return -1;
    }
    tdm_coll_alg alg = n > 1 ? accepted_alg((tdm_coll_kind)kind, words[1]) : TDM_ALG_AUTO;
    if (alg == TDM_ALG_AUTO) {
        snprintf(what, sizeof what, "%s takes one of %s after its name, not '%s'", kind_names[kind],
                 kind_algs[kind], n > 1 ? words[1] : "nothing");
        warn_line(warn, context, source, number, what);
        return -1;
    }
    *rule = (tdm_coll_rule){(tdm_coll_kind)kind, alg, 0, LLONG_MAX, 0, LLONG_MAX};
    for (int i = 2; i < n; i++) {
        int bytes = strncmp(words[i], "bytes=", 6) == 0;
        int ranks = strncmp(words[i], "ranks=", 6) == 0;
        if ((!bytes && !ranks) ||
            parse_range(words[i] + 6, bytes, bytes ? &rule->min_bytes : &rule->min_ranks,
                        bytes ? &rule->max_bytes : &rule->max_ranks) != 0) {
            snprintf(what, sizeof what,
                     "'%s' is not a condition (accepted: bytes=LO-HI and ranks=LO-HI, where "
                     "either bound may be left out, as in bytes=64k- or ranks=-8, or a single "
                     "value; sizes take k, m, g)",
                     words[i]);
            warn_line(warn, context, source, number, what);
            return -1;
        }
    }
    return 1;
}

void tdm_coll_tuning_clear(void)
{
    free(rules);
    rules = NULL;
    nrules = 0;
}

int tdm_coll_tuning_parse(const char *text, const char *source, tdm_config_warn_fn warn,
                          void *context)
{
    tdm_coll_tuning_clear();
    char *copy = strdup(text);
    if (!copy)
        return -1;
    int warnings = 0, number = 0, capacity = 0;
    for (char *line = copy, *next; line; line = next) {
        number++;
        if ((next = strchr(line, '\n')))
            *next++ = '\0';
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        tdm_coll_rule rule;
        int got = parse_line(line, source, number, &rule, warn, context);
        warnings += got < 0;
        if (got <= 0)
            continue;
        if (nrules == capacity) {
            capacity = capacity ? 2 * capacity : 8;
            tdm_coll_rule *more = realloc(rules, sizeof *rules * (size_t)capacity);
            if (!more) {
                free(copy);
                return -1;
            }
            rules = more;
        }
        rules[nrules++] = rule;
    }
    free(copy);
    return warnings;
}

int tdm_coll_tuning_load(const char *path, tdm_config_warn_fn warn, void *context)
{
    char message[512];
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(message, sizeof message,
                 "TANDEM_COLL_TUNING: cannot read %s: %s; the built-in rules apply", path,
                 strerror(errno));
        if (warn)
            warn(context, message);
        return 1;
    }
    size_t size = 0, capacity = 0;
    char *text = NULL;
    for (size_t got = 1; got > 0; size += got) {
        if (size + 1 >= capacity) {
            char *more = realloc(text, capacity = capacity ? 2 * capacity : 4096);
            if (!more) {
                free(text);
                fclose(f);
                return -1;
            }
            text = more;
        }
        got = fread(text + size, 1, capacity - size - 1, f);
    }
    fclose(f);
    text[size] = '\0';
    int warnings = tdm_coll_tuning_parse(text, path, warn, context);
    free(text);
    return warnings;
}

/* ----------------------------------------------------------- selection */

static int power_of_two(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

tdm_coll_alg tdm_coll_default(tdm_coll_kind kind, long long bytes, int ranks)
{
    /* On 2 ranks one message through the MPI library's shared memory (a
       single copy) was faster than a copy into a slot and one out of it, at
       64 KiB 1.5 to 4 times, on both MPIs (docs/PERFORMANCE.md, "Shared
       memory or messages"). */
    switch (kind) { /* those that accept shared (kind_algs) */
    case TDM_COLL_BCAST:
    case TDM_COLL_SCATTER:
    case TDM_COLL_GATHER:
    case TDM_COLL_ALLGATHER:
    case TDM_COLL_ALLREDUCE:
        if (ranks > 2)
            return TDM_ALG_SHARED;
        break;
    default: break;
    }
    return tdm_coll_default_messages(kind, bytes, ranks);
}

tdm_coll_alg tdm_coll_default_messages(tdm_coll_kind kind, long long bytes, int ranks)
{
    switch (kind) {
    case TDM_COLL_BCAST: /* MPICH's rule: a tree for short messages and few ranks */
        return bytes < 12 * 1024 || ranks < 8 ? TDM_ALG_BINOMIAL : TDM_ALG_SCATTER_ALLGATHER;
    case TDM_COLL_SCATTER:
    case TDM_COLL_GATHER: /* a tree forwards blocks: worth it while they are small */
        return bytes < 16 * 1024 ? TDM_ALG_BINOMIAL : TDM_ALG_FLAT;
    case TDM_COLL_ALLGATHER: /* log2(n) steps while the data is small, then a ring */
        if (bytes * ranks >= 512 * 1024)
            return TDM_ALG_RING;
        return power_of_two(ranks) ? TDM_ALG_RECURSIVE_DOUBLING : TDM_ALG_BRUCK;
    case TDM_COLL_ALLTOALL: /* everything at once while the blocks are small */
        return bytes <= 32 * 1024 ? TDM_ALG_LINEAR : TDM_ALG_PAIRWISE;
    case TDM_COLL_ALLREDUCE: /* on 2 ranks recursive doubling is one exchange: best */
        return bytes < 64 * 1024 || ranks <= 2 ? TDM_ALG_RECURSIVE_DOUBLING
                                               : TDM_ALG_REDUCE_SCATTER_ALLGATHER;
    case TDM_COLL_REDUCE_SCATTER:
    default: return TDM_ALG_PAIRWISE;
    }
}

tdm_coll_alg tdm_coll_select(tdm_coll_kind kind, long long bytes, int ranks)
{
    for (int i = 0; i < nrules; i++) {
        const tdm_coll_rule *r = &rules[i];
        if (r->kind == kind && bytes >= r->min_bytes && bytes <= r->max_bytes &&
            ranks >= r->min_ranks && ranks <= r->max_ranks)
            return r->alg;
    }
    return tdm_coll_default(kind, bytes, ranks);
}
