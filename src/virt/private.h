/*
 * Privatized globals: the program's written global and static variables
 * named by `tandem cc --privatize`, a copy per virtual rank, swapped in
 * whenever another rank of the process starts to run (one core per
 * process: one rank runs at a time); or, with more cores, a copy of the
 * whole program per rank (below).
 */
#ifndef TDM_VIRT_PRIVATE_H
#define TDM_VIRT_PRIVATE_H

#include <stddef.h>

/* Find the variables called 'names' (NULL-terminated) in the program's
   symbol table, placed by 'anchor', the address of the program's symbol
   'anchor_name'. Returns 0, or -1 with the reason in 'why'. */
int tdm_virt_private_find(const char *const *names, const void *anchor, const char *anchor_name,
                          char *why, size_t why_size);

/* The bytes of the variables found. */
size_t tdm_virt_private_bytes(void);

/* A copy per rank of 'ranks', each holding the variables' values now.
   Returns 0, or -1 without memory. */
int tdm_virt_private_start(int ranks);

/* Local rank 'rank' starts to run: its values in place (the last rank's
   kept). Only the kernel thread that runs the ranks. */
void tdm_virt_private_enter(int rank);

void tdm_virt_private_finish(void);

/*
 * With more than one core per process the ranks of a process run at once,
 * so they cannot take turns with one set of variables: each rank runs its
 * own copy of the program instead, the shared object that `tandem cc
 * --privatize` built of it and placed in the executable ('image', 'bytes'),
 * loaded once per rank from a file of its own in memory (memfd), its
 * references bound inside itself (-Bsymbolic), its globals its own.
 */

/* What a copy's entry is: the program's main with argc and argv (C, and
   C++'s int main(int, char **)), C++'s int main(), or TinyMPI's
   TMPI_main, to run between TMPI_Init and TMPI_Finalize. */
enum { TDM_VIRT_ENTRY_MAIN, TDM_VIRT_ENTRY_VOID, TDM_VIRT_ENTRY_TINYMPI };

typedef struct {
    int kind;    /* TDM_VIRT_ENTRY_* */
    void *entry; /* its function */
} tdm_virt_copy;

/* Load 'count' copies of the program, their entries in 'loaded'. Returns 0, or -1 with
   the reason in 'why'. Application thread, before the ranks start. */
int tdm_virt_private_load(const void *image, size_t bytes, int count, tdm_virt_copy *loaded,
                          char *why, size_t why_size);

#endif
