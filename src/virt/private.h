/*
 * Privatized globals: the program's written global and static variables
 * named by `tandem cc --privatize`, a copy per virtual rank, swapped in
 * whenever another rank of the process starts to run (one core per
 * process: one rank runs at a time).
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

#endif
