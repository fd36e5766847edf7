/*
 * Attributes cached on the virtual ranks' communicators
 * (MPI_Comm_create_keyval, MPI_Comm_set_attr, MPI_Comm_get_attr...). The
 * keyvals are the process's, shared by its ranks (a library that keeps its
 * keyval in a static variable, as many do, finds it valid on every rank);
 * each rank's communicator holds its own values. The predefined attributes
 * (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE,
 * MPI_APPNUM, MPI_LASTUSEDCODE) keep the real MPI's keyvals and are found
 * on every communicator, as MPICH has them.
 *
 * The callbacks run on the calling rank, with no lock held: they may call
 * MPI. The communicators are named by their rank's table slot (the table
 * may move while a callback makes a communicator) and by the program's
 * handle, which the callbacks receive.
 */
#ifndef TDM_VIRT_ATTR_H
#define TDM_VIRT_ATTR_H

#include <mpi.h>

/* The values of the predefined attributes: this job's world size (for
   MPI_UNIVERSE_SIZE) and the real MPI's MPI_LASTUSEDCODE. */
void tdm_virt_attr_init(int world_size, int last_used_code);

/* MPI_Comm_create_keyval and MPI_Comm_free_keyval. */
int tdm_virt_keyval_create(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                           void *extra_state, int *keyval);
int tdm_virt_keyval_free(int *keyval);

/* Whether 'keyval' is a predefined attribute's. */
int tdm_virt_attr_predefined(int keyval);

/* MPI_Comm_set_attr (deleting the value it replaces), MPI_Comm_get_attr
   (*(void **)value and *flag) and MPI_Comm_delete_attr, on local rank
   'local''s communicator in 'slot'. Return an MPI error code. */
int tdm_virt_attr_set(int local, int slot, MPI_Comm handle, int keyval, void *value);
int tdm_virt_attr_get(int local, int slot, int keyval, void *value, int *flag);
int tdm_virt_attr_delete(int local, int slot, MPI_Comm handle, int keyval);

/* MPI_Comm_dup: each attribute of 'from' that its copy callback keeps,
   set on 'to'. */
int tdm_virt_attr_copy(int local, int from, MPI_Comm from_handle, int to);

/* Every attribute of the communicator deleted, the last set first (before
   MPI_Comm_free, and for MPI_COMM_SELF in MPI_Finalize). */
int tdm_virt_attr_delete_all(int local, int slot, MPI_Comm handle);

#endif
