/*
 * Tandem's virtual ranks: MPI ranks that are user-level threads, several per
 * core, in one process per host (docs/VIRTUAL.md). A program built with
 * `tandem cc` keeps its MPI_* calls; include/virt/mpi.h maps each one it
 * supports to the TMPI_* function of the same signature below, and its main
 * to the entry each rank runs.
 */
#ifndef TMPI_H
#define TMPI_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TMPI_EXPORT __attribute__((visibility("default")))
#else
#define TMPI_EXPORT
#endif

/* Start the runtime: MPI_Init of the real MPI, the cores and ranks, each
   rank running main_of_rank(argc, argv); returns the process's exit code.
   The program's main (renamed by include/virt/mpi.h) is main_of_rank. */
TMPI_EXPORT int TMPI_Run(int argc, char **argv, int (*main_of_rank)(int, char **));

/* Before TMPI_Run: give each virtual rank a copy of the program's variables
   called 'names' (NULL-terminated; `tandem cc --privatize` lists its
   written globals and statics), found in its symbol table, where 'anchor'
   is the address of its symbol 'anchor_name'. One core per process. */
TMPI_EXPORT void TMPI_Set_private(const char *const *names, const void *anchor,
                                  const char *anchor_name);
/* Before TMPI_Run, with TMPI_Set_private: the program built as a shared
   object ('bytes' at 'image'), of which each rank runs a copy of its own
   when a process has more than one core. */
TMPI_EXPORT void TMPI_Set_program_copy(const void *image, size_t bytes);
/* An exit handler registered (__cxa_atexit) while a virtual rank of a
   privatized program runs: kept, and run at the end of TMPI_Run with that
   rank's copies in place, last registered first; returns 1. Else 0: the
   caller registers it with the C library. */
TMPI_EXPORT int TMPI_Private_atexit(void (*handler)(void *), void *arg);

TMPI_EXPORT int TMPI_Init(int *argc, char ***argv);
TMPI_EXPORT int TMPI_Init_thread(int *argc, char ***argv, int required, int *provided);
TMPI_EXPORT int TMPI_Initialized(int *flag);
TMPI_EXPORT int TMPI_Finalize(void);
TMPI_EXPORT int TMPI_Finalized(int *flag);
TMPI_EXPORT int TMPI_Query_thread(int *provided);
TMPI_EXPORT int TMPI_Is_thread_main(int *flag);
TMPI_EXPORT int TMPI_Abort(MPI_Comm comm, int errorcode);
TMPI_EXPORT double TMPI_Wtime(void);
TMPI_EXPORT double TMPI_Wtick(void);

TMPI_EXPORT int TMPI_Comm_rank(MPI_Comm comm, int *rank);
TMPI_EXPORT int TMPI_Comm_size(MPI_Comm comm, int *size);
TMPI_EXPORT int TMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
TMPI_EXPORT int TMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
TMPI_EXPORT int TMPI_Comm_free(MPI_Comm *comm);
TMPI_EXPORT int TMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
TMPI_EXPORT int TMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler);
TMPI_EXPORT int TMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                                            MPI_Errhandler *errhandler);
TMPI_EXPORT int TMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
TMPI_EXPORT int TMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);
TMPI_EXPORT int TMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                     MPI_Comm *newcomm);
TMPI_EXPORT int TMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
TMPI_EXPORT int TMPI_Comm_set_info(MPI_Comm comm, MPI_Info info);
TMPI_EXPORT int TMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used);
TMPI_EXPORT int TMPI_Comm_set_name(MPI_Comm comm, const char *comm_name);
TMPI_EXPORT int TMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen);
TMPI_EXPORT int TMPI_Comm_test_inter(MPI_Comm comm, int *flag);
TMPI_EXPORT int TMPI_Comm_get_parent(MPI_Comm *parent);
TMPI_EXPORT int TMPI_Pcontrol(const int level, ...);
TMPI_EXPORT int TMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                        MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                                        int *comm_keyval, void *extra_state);
TMPI_EXPORT int TMPI_Comm_free_keyval(int *comm_keyval);
TMPI_EXPORT int TMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val);
TMPI_EXPORT int TMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag);
TMPI_EXPORT int TMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval);
/* MPI-1's names of the same (Open MPI's mpi.h still has them) */
TMPI_EXPORT int TMPI_Keyval_create(MPI_Comm_copy_attr_function *copy_fn,
                                   MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                                   void *extra_state);
TMPI_EXPORT int TMPI_Keyval_free(int *keyval);
TMPI_EXPORT int TMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val);
TMPI_EXPORT int TMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag);
TMPI_EXPORT int TMPI_Attr_delete(MPI_Comm comm, int keyval);
TMPI_EXPORT int TMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
TMPI_EXPORT int TMPI_Comm_group(MPI_Comm comm, MPI_Group *group);
TMPI_EXPORT int TMPI_Group_size(MPI_Group group, int *size);
TMPI_EXPORT int TMPI_Group_rank(MPI_Group group, int *rank);
TMPI_EXPORT int TMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
TMPI_EXPORT int TMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
TMPI_EXPORT int TMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
                                           MPI_Group group2, int ranks2[]);
TMPI_EXPORT int TMPI_Group_free(MPI_Group *group);
TMPI_EXPORT int TMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
TMPI_EXPORT int TMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
TMPI_EXPORT int TMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
TMPI_EXPORT int TMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result);
TMPI_EXPORT int TMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
TMPI_EXPORT int TMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
TMPI_EXPORT int TMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);

TMPI_EXPORT int TMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm);
TMPI_EXPORT int TMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm);
TMPI_EXPORT int TMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm);
TMPI_EXPORT int TMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm);
TMPI_EXPORT int TMPI_Buffer_attach(void *buffer, int size);
TMPI_EXPORT int TMPI_Buffer_detach(void *buffer_addr, int *size);
TMPI_EXPORT int TMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Status *status);
TMPI_EXPORT int TMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                           MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest,
                                      int sendtag, int source, int recvtag, MPI_Comm comm,
                                      MPI_Status *status);
TMPI_EXPORT int TMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                              int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                              int source, int recvtag, MPI_Comm comm, MPI_Status *status);
TMPI_EXPORT int TMPI_Wait(MPI_Request *request, MPI_Status *status);
TMPI_EXPORT int TMPI_Waitall(int count, MPI_Request *requests, MPI_Status *statuses);
TMPI_EXPORT int TMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                              int array_of_indices[], MPI_Status array_of_statuses[]);
TMPI_EXPORT int TMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                              int array_of_indices[], MPI_Status array_of_statuses[]);
TMPI_EXPORT int TMPI_Waitany(int count, MPI_Request *requests, int *index, MPI_Status *status);
TMPI_EXPORT int TMPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
TMPI_EXPORT int TMPI_Testall(int count, MPI_Request *requests, int *flag, MPI_Status *statuses);
TMPI_EXPORT int TMPI_Testany(int count, MPI_Request *requests, int *index, int *flag,
                             MPI_Status *status);
TMPI_EXPORT int TMPI_Request_free(MPI_Request *request);
TMPI_EXPORT int TMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                               MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest,
                                int tag, MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest,
                                int tag, MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest,
                                int tag, MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                               MPI_Comm comm, MPI_Request *request);
/* Cartesian topologies (MPI_Dims_create is the real MPI's: local). */
TMPI_EXPORT int TMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                                 const int periods[], int reorder, MPI_Comm *comm_cart);
TMPI_EXPORT int TMPI_Cartdim_get(MPI_Comm comm, int *ndims);
TMPI_EXPORT int TMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]);
TMPI_EXPORT int TMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank);
TMPI_EXPORT int TMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
TMPI_EXPORT int TMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source,
                                int *rank_dest);
TMPI_EXPORT int TMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm);
TMPI_EXPORT int TMPI_Topo_test(MPI_Comm comm, int *status);
/* Distributed graph topologies, the adjacent form (unweighted). */
TMPI_EXPORT int TMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                                const int sources[], const int sourceweights[],
                                                int outdegree, const int destinations[],
                                                const int destweights[], MPI_Info info, int reorder,
                                                MPI_Comm *comm_dist_graph);
TMPI_EXPORT int TMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
                                                int *weighted);
TMPI_EXPORT int TMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                                          int sourceweights[], int maxoutdegree, int destinations[],
                                          int destweights[]);
/* The general form: each rank names any edges (unweighted; the order of
   a rank's neighbours is the runtime's, as MPI allows). */
TMPI_EXPORT int TMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                                       const int degrees[], const int destinations[],
                                       const int weights[], MPI_Info info, int reorder,
                                       MPI_Comm *comm_dist_graph);
/* Graph topologies (MPI-1: every rank gives the whole graph). */
TMPI_EXPORT int TMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
                                  const int edges[], int reorder, MPI_Comm *comm_graph);
TMPI_EXPORT int TMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges);
TMPI_EXPORT int TMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]);
TMPI_EXPORT int TMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors);
TMPI_EXPORT int TMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]);
/* Where a topology would place this rank: its rank, as the runtime keeps
   the order (MPI_UNDEFINED beyond the topology's ranks). */
TMPI_EXPORT int TMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                              int *newrank);
TMPI_EXPORT int TMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                               int *newrank);
/* Neighbourhood collectives, on Cartesian, graph and distributed graph communicators. */
TMPI_EXPORT int TMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                        MPI_Comm comm);
TMPI_EXPORT int TMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                         void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                         MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                         void *recvbuf, const int recvcounts[], const int displs[],
                                         MPI_Datatype recvtype, MPI_Comm comm);
TMPI_EXPORT int TMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                          void *recvbuf, const int recvcounts[], const int displs[],
                                          MPI_Datatype recvtype, MPI_Comm comm,
                                          MPI_Request *request);
TMPI_EXPORT int TMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                       MPI_Comm comm);
TMPI_EXPORT int TMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                        MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                        const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                        const int recvcounts[], const int rdispls[],
                                        MPI_Datatype recvtype, MPI_Comm comm);
TMPI_EXPORT int TMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                         const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                         const int recvcounts[], const int rdispls[],
                                         MPI_Datatype recvtype, MPI_Comm comm,
                                         MPI_Request *request);
TMPI_EXPORT int TMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                        void *recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                        MPI_Comm comm);
TMPI_EXPORT int TMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                         const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                         void *recvbuf, const int recvcounts[],
                                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                         MPI_Comm comm, MPI_Request *request);
/* MPI-4's persistent collectives (MPICH 4; Open MPI 4.1's mpi.h has none). */
TMPI_EXPORT int TMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request);
TMPI_EXPORT int TMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root,
                                MPI_Comm comm, MPI_Info info, MPI_Request *request);
TMPI_EXPORT int TMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request);
TMPI_EXPORT int TMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request);
TMPI_EXPORT int TMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request);
TMPI_EXPORT int TMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request);
TMPI_EXPORT int TMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request);
TMPI_EXPORT int TMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                                   MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                   MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request);
TMPI_EXPORT int TMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Info info, MPI_Request *request);
TMPI_EXPORT int TMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request);
TMPI_EXPORT int TMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request);
TMPI_EXPORT int TMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request);
TMPI_EXPORT int TMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], const MPI_Datatype sendtypes[],
                                    void *recvbuf, const int recvcounts[], const int rdispls[],
                                    const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request);
TMPI_EXPORT int TMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
TMPI_EXPORT int TMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request);
TMPI_EXPORT int TMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                               MPI_Info info, MPI_Request *request);
TMPI_EXPORT int TMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                         MPI_Info info, MPI_Request *request);
TMPI_EXPORT int TMPI_Start(MPI_Request *request);
TMPI_EXPORT int TMPI_Startall(int count, MPI_Request *requests);
TMPI_EXPORT int TMPI_Cancel(MPI_Request *request);
TMPI_EXPORT int TMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
TMPI_EXPORT int TMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
TMPI_EXPORT int TMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
TMPI_EXPORT int TMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
                            MPI_Status *status);
TMPI_EXPORT int TMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                             MPI_Status *status);
TMPI_EXPORT int TMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                           MPI_Status *status);
TMPI_EXPORT int TMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                            MPI_Request *request);

TMPI_EXPORT int TMPI_Barrier(MPI_Comm comm);
TMPI_EXPORT int TMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
TMPI_EXPORT int TMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm);
TMPI_EXPORT int TMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm);
TMPI_EXPORT int TMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm);
TMPI_EXPORT int TMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm);
TMPI_EXPORT int TMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
TMPI_EXPORT int TMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

TMPI_EXPORT int TMPI_Ibarrier(MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                            MPI_Request *request);
TMPI_EXPORT int TMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, int root, MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request *request);
TMPI_EXPORT int TMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request);
TMPI_EXPORT int TMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request);

TMPI_EXPORT int TMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm);
TMPI_EXPORT int TMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm);
TMPI_EXPORT int TMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                               MPI_Datatype sendtype, void *recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root, MPI_Comm comm,
                               MPI_Request *request);
TMPI_EXPORT int TMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm);
TMPI_EXPORT int TMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
TMPI_EXPORT int TMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request);
TMPI_EXPORT int TMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf,
                               const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm);
TMPI_EXPORT int TMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                const MPI_Datatype sendtypes[], void *recvbuf,
                                const int recvcounts[], const int rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm comm,
                                MPI_Request *request);
TMPI_EXPORT int TMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm);
TMPI_EXPORT int TMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm);
TMPI_EXPORT int TMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Request *request);
TMPI_EXPORT int TMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
TMPI_EXPORT int TMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                           MPI_Request *request);
TMPI_EXPORT int TMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
TMPI_EXPORT int TMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                     MPI_Request *request);

/*
 * TinyMPI's spelling (its report, seed 004; docs/VIRTUAL.md): a program
 * whose entry is TMPI_main(int, char **), that calls the TMPI_* functions
 * above and names the TMPI_* types and constants below, and never calls
 * TMPI_Init or TMPI_Finalize: each rank is initialized before its
 * TMPI_main and finalized after it. It includes this header; `tandem c++`
 * (or `tandem cc`) builds it. TMPI_main has C's linkage from here.
 */
int TMPI_main(int argc, char **argv);

/* What the runtime leaves to the real MPI: its statuses and datatypes */
#define TMPI_Get_count MPI_Get_count
#define TMPI_Type_size MPI_Type_size

typedef MPI_Comm TMPI_Comm;
typedef MPI_Datatype TMPI_Datatype;
typedef MPI_Op TMPI_Op;
typedef MPI_Request TMPI_Request;
typedef MPI_Status TMPI_Status;
typedef MPI_Group TMPI_Group;

#define TMPI_COMM_WORLD MPI_COMM_WORLD
#define TMPI_COMM_SELF MPI_COMM_SELF
#define TMPI_COMM_NULL MPI_COMM_NULL
#define TMPI_REQUEST_NULL MPI_REQUEST_NULL
#define TMPI_STATUS_IGNORE MPI_STATUS_IGNORE
#define TMPI_STATUSES_IGNORE MPI_STATUSES_IGNORE
#define TMPI_ANY_SOURCE MPI_ANY_SOURCE
#define TMPI_ANY_TAG MPI_ANY_TAG
#define TMPI_PROC_NULL MPI_PROC_NULL
#define TMPI_IN_PLACE MPI_IN_PLACE
#define TMPI_SUCCESS MPI_SUCCESS
#define TMPI_UNDEFINED MPI_UNDEFINED

#define TMPI_CHAR MPI_CHAR
#define TMPI_BYTE MPI_BYTE
#define TMPI_SHORT MPI_SHORT
#define TMPI_INT MPI_INT
#define TMPI_LONG MPI_LONG
#define TMPI_LONG_LONG MPI_LONG_LONG
#define TMPI_UNSIGNED MPI_UNSIGNED
#define TMPI_UNSIGNED_LONG MPI_UNSIGNED_LONG
#define TMPI_FLOAT MPI_FLOAT
#define TMPI_DOUBLE MPI_DOUBLE
#define TMPI_LONG_DOUBLE MPI_LONG_DOUBLE
#define TMPI_INT32_T MPI_INT32_T
#define TMPI_INT64_T MPI_INT64_T
#define TMPI_UINT32_T MPI_UINT32_T
#define TMPI_UINT64_T MPI_UINT64_T

#define TMPI_SUM MPI_SUM
#define TMPI_PROD MPI_PROD
#define TMPI_MAX MPI_MAX
#define TMPI_MIN MPI_MIN
#define TMPI_LAND MPI_LAND
#define TMPI_LOR MPI_LOR
#define TMPI_BAND MPI_BAND
#define TMPI_BOR MPI_BOR
#define TMPI_MAXLOC MPI_MAXLOC
#define TMPI_MINLOC MPI_MINLOC

#ifdef __cplusplus
}
#endif

#endif
