/*
 * The files of the whole-run record, written at MPI_Finalize:
 *
 *   PREFIX.<world rank>.prof  one per rank, in the line format of Open MPI
 *                             4.1's monitoring, so that its profile2mat reads
 *                             them unchanged;
 *   PREFIX.json               the whole job (rank 0 gathers every rank's
 *                             counters): each rank's host, each public
 *                             kind's matrices and histograms (all included)
 *                             and the per-communicator collective counts.
 *
 * PREFIX is TANDEM_MONITOR_OUTPUT. Without it the files go to
 * "tandem-monitor" in the working directory, or to "tandem-monitor-N" for the
 * first N whose files do not exist yet: Tandem never overwrites a file whose
 * name the user did not give. An unwritable path is reported, not fatal.
 *
 * What they hold is a view of everything that runs from MPI_Init to
 * MPI_Finalize (the whole-run view), kept here.
 */
#include "monitor/dump.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/runtime.h"
#include "impl/impl.h"
#include "monitor/monitor.h"

#define DEFAULT_PREFIX "tandem-monitor"

static tdm_monitor_view run_view;

typedef struct {
    int rank, size;
    const uint64_t *values; /* [kind][peer][field], TDM_VIEW_KINDS kinds */
} counters;

static const uint64_t *at(const counters *c, int kind, int peer)
{
    return c->values + ((size_t)kind * (size_t)c->size + (size_t)peer) * TDM_FIELDS;
}

static void histogram(FILE *f, const uint64_t *a, const uint64_t *b)
{
    for (int bin = 0; bin < TDM_BINS; bin++)
        fprintf(f, "%" PRIu64 "%s", a[2 + bin] + b[2 + bin], bin < TDM_BINS - 1 ? "," : "\n");
}

static void lines(FILE *f, const counters *c, const char *tag, int kind)
{
    for (int peer = 0; peer < c->size; peer++) {
        const uint64_t *p = at(c, kind, peer);
        if (p[0] > 0)
            fprintf(f, "%s\t%d\t%d\t%" PRIu64 " bytes\t%" PRIu64 " msgs sent\n", tag, c->rank, peer,
                    p[1], p[0]);
    }
}

static void comm_lines(const tdm_monitor_comm_summary *s, void *arg)
{
    FILE *f = arg;
    static const char *const shapes[TDM_SHAPES] = {"O2A", "A2O", "A2A"};
    fprintf(f, "D\t%s\tprocs: ", s->name);
    for (int i = 0; i < s->size; i++)
        fprintf(f, "%d%s", s->world[i], i < s->size - 1 ? "," : "\n");
    for (int k = 0; k < TDM_SHAPES; k++)
        fprintf(f, "%s\t%d\t%" PRIu64 " bytes\t%" PRIu64 " msgs sent\n", shapes[k], tdm_world_rank,
                s->bytes[k], s->operations[k]);
}

/* Open MPI 4.1's layout: E lines (user point-to-point) carry the histogram of
   every message sent to the peer, internal ones included; an I line
   (collective-internal traffic) carries it only when the peer has no E line.
   The C lines hold the collectives the MPI library ran, the I lines the
   messages of those Tandem ran: what profile2mat sums into its "all" matrix
   (E, I, S, R and C lines) is then the all kind, each byte once. */
void tdm_monitor_write_prof(FILE *f, int rank, int size, const uint64_t *values)
{
    counters cs = {rank, size, values}, *c = &cs;
    fprintf(f, "# POINT TO POINT\n");
    for (int peer = 0; peer < c->size; peer++) {
        const uint64_t *e = at(c, TANDEM_MONITOR_P2P_SEND, peer);
        const uint64_t *i = at(c, TANDEM_MONITOR_COLL_INTERNAL, peer);
        if (e[0] > 0) {
            fprintf(f, "E\t%d\t%d\t%" PRIu64 " bytes\t%" PRIu64 " msgs sent\t", c->rank, peer, e[1],
                    e[0]);
            histogram(f, e, i);
        }
    }
    for (int peer = 0; peer < c->size; peer++) {
        const uint64_t *e = at(c, TANDEM_MONITOR_P2P_SEND, peer);
        const uint64_t *i = at(c, TANDEM_MONITOR_COLL_INTERNAL, peer);
        if (i[0] == 0)
            continue;
        fprintf(f, "I\t%d\t%d\t%" PRIu64 " bytes\t%" PRIu64 " msgs sent%s", c->rank, peer, i[1],
                i[0], e[0] > 0 ? "\n" : "\t");
        if (e[0] == 0)
            histogram(f, e, i);
    }
    fprintf(f, "# OSC\n");
    lines(f, c, "S", TANDEM_MONITOR_OSC_PUT);
    lines(f, c, "R", TANDEM_MONITOR_OSC_GET);
    fprintf(f, "# COLLECTIVES\n");
    lines(f, c, "C", TDM_COLL_NATIVE);
    tdm_monitor_each_comm(comm_lines, f);
}

/* A growing string for the JSON text. */
typedef struct {
    char *text;
    size_t len, cap;
    int failed;
} buffer;

static void put(buffer *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buffer *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = b->text ? vsnprintf(b->text + b->len, room, fmt, ap) : -1;
        va_end(ap);
        if (n >= 0 && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 1 << 16;
        while (n >= 0 && cap - b->len <= (size_t)n)
            cap *= 2;
        char *text = realloc(b->text, cap);
        if (!text) {
            b->failed = 1;
            return;
        }
        b->text = text;
        b->cap = cap;
    }
}

static void json_array(buffer *b, const counters *c, int kind, int field)
{
    put(b, "[");
    for (int peer = 0; peer < c->size; peer++)
        put(b, "%s%" PRIu64, peer ? ", " : "", at(c, kind, peer)[field]);
    put(b, "]");
}

static void json_string(buffer *b, const char *s)
{
    put(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            put(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            put(b, "\\u%04x", (unsigned)(unsigned char)*s);
        else
            put(b, "%c", *s);
    }
    put(b, "\"");
}

static void json_comm(const tdm_monitor_comm_summary *s, void *arg)
{
    buffer *b = arg;
    static const char *const shapes[TDM_SHAPES] = {"one_to_all", "all_to_one", "all_to_all"};
    put(b, "%s\n      {\"name\": ", b->text[b->len - 1] == '[' ? "" : ",");
    json_string(b, s->name);
    put(b, ", \"procs\": [");
    for (int i = 0; i < s->size; i++)
        put(b, "%s%d", i ? ", " : "", s->world[i]);
    put(b, "]");
    for (int k = 0; k < TDM_SHAPES; k++)
        put(b, ", \"%s\": {\"operations\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", shapes[k],
            s->operations[k], s->bytes[k]);
    put(b, "}");
}

/* This rank's object of the job file's "ranks" array, with its host: the
   MPI library's processor name. */
static void json_rank(buffer *b, const counters *c)
{
    char host[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int length = 0;
    if (PMPI_Get_processor_name(host, &length) != MPI_SUCCESS)
        length = 0;
    host[length] = '\0';
    put(b, "    {\"rank\": %d, \"host\": ", c->rank);
    json_string(b, host);
    put(b, ", \"counters\": {");
    for (int kind = 0; kind < TDM_KINDS; kind++) {
        put(b, "%s\n      \"%s\": {\"messages\": ", kind ? "," : "", tdm_monitor_kind_names[kind]);
        json_array(b, c, kind, 0);
        put(b, ", \"bytes\": ");
        json_array(b, c, kind, 1);
        put(b, ", \"histogram\": [");
        for (int peer = 0; peer < c->size; peer++) {
            put(b, "%s[", peer ? ", " : "");
            for (int bin = 0; bin < TDM_BINS; bin++)
                put(b, "%s%" PRIu64, bin ? "," : "", at(c, kind, peer)[2 + bin]);
            put(b, "]");
        }
        put(b, "]}");
    }
    put(b, "},\n     \"communicators\": [");
    tdm_monitor_each_comm(json_comm, b);
    put(b, "]}");
}

static int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Rank 0 picks the prefix (see the top of the file); every rank gets it. */
static int choose_prefix(char *prefix, size_t size, int *named)
{
    const char *given = tdm_config[TDM_CFG_MONITOR_OUTPUT].text;
    *named = given && *given;
    if (tdm_world_rank == 0) {
        if (*named) {
            snprintf(prefix, size, "%s", given);
        } else {
            char json[4200], prof[4200];
            for (int n = 0; n < 10000; n++) {
                if (n == 0)
                    snprintf(prefix, size, "%s", DEFAULT_PREFIX);
                else
                    snprintf(prefix, size, "%s-%d", DEFAULT_PREFIX, n);
                snprintf(json, sizeof json, "%s.json", prefix);
                snprintf(prof, sizeof prof, "%s.0.prof", prefix);
                if (!exists(json) && !exists(prof))
                    break;
            }
        }
    }
    return PMPI_Bcast(prefix, (int)size, MPI_CHAR, 0, tdm_world);
}

/* fopen for writing; with 'exclusive', fails if the file exists. */
static FILE *open_output(const char *path, int exclusive)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | (exclusive ? O_EXCL : 0), 0644);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f)
        close(fd);
    return f;
}

static int write_file(const char *path, int exclusive, void (*body)(FILE *, const void *),
                      const void *arg)
{
    FILE *f = open_output(path, exclusive);
    if (!f) {
        tdm_log_warn("monitoring: cannot write %s: %s%s", path, strerror(errno),
                     exclusive && errno == EEXIST
                         ? " (Tandem does not overwrite a file you did not name; set "
                           "TANDEM_MONITOR_OUTPUT)"
                         : " (TANDEM_MONITOR_OUTPUT=PREFIX must name a writable place)");
        return -1;
    }
    body(f, arg);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        tdm_log_warn("monitoring: writing %s failed: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static void prof_body(FILE *f, const void *arg)
{
    const counters *c = arg;
    tdm_monitor_write_prof(f, c->rank, c->size, c->values);
}

typedef struct {
    const char *mpi;
    int size;
    const char *ranks; /* the gathered rank objects, comma-separated */
} job;

static void json_body(FILE *f, const void *arg)
{
    const job *j = arg;
    fprintf(f, "{\"format\": \"tandem-monitor\", \"version\": 2, \"world_size\": %d, ", j->size);
    fprintf(f, "\"mpi\": \"%s\",\n \"kinds\": [", j->mpi);
    for (int kind = 0; kind < TDM_KINDS; kind++)
        fprintf(f, "%s\"%s\"", kind ? ", " : "", tdm_monitor_kind_names[kind]);
    fprintf(f, "],\n \"ranks\": [\n%s\n ]}\n", j->ranks);
}

/* Write the files of the whole-run view 'run', stopped. */
static void write_files(tdm_monitor_view *run)
{
    char prefix[4096], path[4200];
    int named, ok = 1, all_ok = 0;
    uint64_t *values = malloc(sizeof(uint64_t) * ((size_t)run->n + 1));
    if (choose_prefix(prefix, sizeof prefix, &named) != MPI_SUCCESS || !values) {
        free(values);
        tdm_log_warn("monitoring: cannot write the files (out of memory or MPI error)");
        return;
    }
    tdm_monitor_view_read(run, values);
    counters c = {tdm_world_rank, tdm_monitor_world_size(), values};

    snprintf(path, sizeof path, "%s.%d.prof", prefix, c.rank);
    if (write_file(path, !named, prof_body, &c) != 0)
        ok = 0;

    /* The job file: every rank's object, gathered on rank 0. */
    buffer b = {0};
    json_rank(&b, &c);
    int len = b.failed ? 0 : (int)b.len, *lens = NULL, *displs = NULL, total = 0;
    char *ranks = NULL;
    if (c.rank == 0) {
        lens = calloc((size_t)c.size, sizeof(int));
        displs = calloc((size_t)c.size, sizeof(int));
    }
    PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, tdm_world);
    if (c.rank == 0 && lens && displs) {
        for (int r = 0; r < c.size; r++) {
            displs[r] = total;
            total += lens[r] + 2; /* room for the ",\n" separators */
        }
        ranks = calloc((size_t)total + 1, 1);
    }
    PMPI_Gatherv(b.text ? b.text : "", len, MPI_CHAR, ranks, lens, displs, MPI_CHAR, 0, tdm_world);
    if (c.rank == 0) {
        if (ranks) {
            /* Join the pieces in place with ",\n" (each piece was placed with
               two spare bytes after it). */
            size_t out = 0;
            for (int r = 0; r < c.size; r++) {
                memmove(ranks + out, ranks + displs[r], (size_t)lens[r]);
                out += (size_t)lens[r];
                if (r < c.size - 1) {
                    memcpy(ranks + out, ",\n", 2);
                    out += 2;
                }
            }
            ranks[out] = '\0';
            job j = {tdm_impl_family(), c.size, ranks};
            snprintf(path, sizeof path, "%s.json", prefix);
            if (write_file(path, !named, json_body, &j) != 0)
                ok = 0;
        } else {
            ok = 0;
        }
    }
    PMPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, 0, tdm_world);
    if (c.rank == 0 && all_ok && TDM_CONFIG_NUMBER(VERBOSE) >= 1)
        tdm_log_info("monitoring written to %s.json and %s.<rank>.prof", prefix, prefix);
    free(ranks);
    free(lens);
    free(displs);
    free(b.text);
    free(values);
}

void tdm_monitor_run_start(void)
{
    int n = (int)((size_t)TDM_VIEW_KINDS * (size_t)tdm_monitor_world_size() * TDM_FIELDS);
    if (TDM_CONFIG_NUMBER(MONITOR) &&
        tdm_monitor_view_init(&run_view, n, NULL, NULL, NULL) == MPI_SUCCESS) {
        tdm_monitor_list_comm(tdm_world); /* its line comes first, as in Open MPI's files */
        tdm_monitor_view_start(&run_view);
    }
}

void tdm_monitor_run_finish(void)
{
    if (!run_view.start)
        return;
    tdm_monitor_view_stop(&run_view);
    write_files(&run_view);
    tdm_monitor_view_free(&run_view);
}
