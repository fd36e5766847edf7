/*
 * Datatypes and operations that Tandem's own work in flight still uses: the
 * rounds of a nonblocking collective that are not posted yet, its copies and
 * its reductions. MPI_Type_free and MPI_Op_free only mark an object for
 * deallocation, and the MPI library keeps it for the operations it has; the
 * rounds Tandem has not posted are not among them. So a schedule holds each
 * derived datatype and user-defined operation it uses until it ends, and an
 * application's free of a held object is deferred to that moment (the
 * application's handle becomes null at once, as MPI says). Predefined
 * objects cannot be freed and are never held. Any thread.
 */
#ifndef TDM_CORE_HOLD_H
#define TDM_CORE_HOLD_H

#include <mpi.h>

/* Hold 'type' (a reference of Tandem's). Returns 1 when it took a hold, 0
   for a predefined type (nothing to hold), -1 without memory. */
int tdm_hold_type(MPI_Datatype type);
int tdm_hold_op(MPI_Op op);

/* Drop a hold taken above; the last one frees an object the application
   freed meanwhile. */
void tdm_release_type(MPI_Datatype type);
void tdm_release_op(MPI_Op op);

#endif
