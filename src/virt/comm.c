/*
 * The communicator tables of this process's ranks. A rank's table is read
 * and written only by that rank.
 */
#include "virt/comm.h"

#include <stdlib.h>

typedef struct {
    tdm_virt_comm *slots;
    int count; /* slots allocated */
} comm_table;

static comm_table *tables;
static int table_count;
static int next_slot = 2; /* contexts 0-1: the world, 2-3: every MPI_COMM_SELF */
static int this_process, process_count = 1;

int tdm_virt_comm_init(int local_ranks, int world_offset, int world_size, int process,
                       int processes)
{
    this_process = process;
    process_count = processes;
    next_slot = 2;
    tables = calloc((size_t)local_ranks, sizeof *tables);
    if (!tables)
        return -1;
    table_count = local_ranks;
    for (int i = 0; i < local_ranks; i++) {
        tables[i].count = 8;
        tables[i].slots = calloc(8, sizeof(tdm_virt_comm));
        if (!tables[i].slots)
            return -1;
        tables[i].slots[TDM_VIRT_COMM_WORLD] =
            (tdm_virt_comm){.used = 1, .context = 0, .size = world_size, .rank = world_offset + i};
        int *me = malloc(sizeof *me);
        if (!me)
            return -1;
        *me = world_offset + i;
        tables[i].slots[TDM_VIRT_COMM_SELF] =
            (tdm_virt_comm){.used = 1, .context = 2, .size = 1, .rank = 0, .members = me};
    }
    return 0;
}

void tdm_virt_comm_finish(void)
{
    for (int i = 0; i < table_count; i++) {
        for (int s = 0; s < tables[i].count; s++) {
            free(tables[i].slots[s].members);
            free(tables[i].slots[s].topo);
            free(tables[i].slots[s].edges);
            free(tables[i].slots[s].attrs);
            free(tables[i].slots[s].name);
        }
        free(tables[i].slots);
    }
    free(tables);
    tables = NULL;
    table_count = 0;
}

tdm_virt_comm *tdm_virt_comm_get(int local, int slot)
{
    if (local < 0 || local >= table_count || slot < 0 || slot >= tables[local].count)
        return NULL;
    tdm_virt_comm *c = &tables[local].slots[slot];
    return c->used ? c : NULL;
}

int tdm_virt_comm_add(int local, int context, int size, int rank, int *members)
{
    comm_table *t = &tables[local];
    int slot = 2;
    while (slot < t->count && t->slots[slot].used)
        slot++;
    if (slot == t->count) {
        tdm_virt_comm *more = realloc(t->slots, sizeof *more * (size_t)t->count * 2);
        if (!more)
            return -1;
        for (int s = t->count; s < t->count * 2; s++)
            more[s] = (tdm_virt_comm){0};
        t->slots = more;
        t->count *= 2;
    }
    t->slots[slot] = (tdm_virt_comm){
        .used = 1, .context = context, .size = size, .rank = rank, .members = members};
    return slot;
}

void tdm_virt_comm_remove(int local, int slot)
{
    if (slot <= TDM_VIRT_COMM_SELF)
        return;
    tdm_virt_comm *c = tdm_virt_comm_get(local, slot);
    if (!c)
        return;
    free(c->members);
    free(c->topo);
    free(c->edges);
    free(c->attrs);
    free(c->name);
    *c = (tdm_virt_comm){0};
}

void tdm_virt_comm_new_contexts(int count, int *first, int *stride)
{
    /* Slot k of process p is context 2 (k H + p): slots of one process
       never meet another's, and slots from 2 on never meet the world's or
       self's. */
    int slot = __atomic_fetch_add(&next_slot, count, __ATOMIC_RELAXED);
    *first = 2 * (slot * process_count + this_process);
    *stride = 2 * process_count;
}
