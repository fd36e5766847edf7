/*
 * Placement inside a run, from the program's own view of the counters
 * (tandem.h: tandem_place_comm): the ranks of a communicator renumbered so
 * that the pairs that exchanged the most bytes in the phase the program
 * measured sit on one host. The processes stay where they are; the new
 * communicator gives each the role (the rank) that suits its host.
 */
#ifndef TDM_MONITOR_PLACE_H
#define TDM_MONITOR_PLACE_H

/* The greedy grouping of tandem place (python/tandem/place.py), for 'n'
   roles on the hosts of 'n' slots: 'traffic' is n x n, symmetric (bytes
   between two roles, both directions); slot s lies on host host_of[s]
   (host numbers in [0, n)). Each host in order of its first slot takes the
   unplaced role with the most traffic to the other unplaced ones, then, until
   its slots are full, the unplaced role with the most traffic to those it
   took (the lowest one on a tie); its slots then get its roles in increasing
   order. With no traffic every slot keeps its own role. 'role_of' gets each
   slot's role. Returns 0, or -1 without memory. */
int tdm_place_greedy(int n, const double *traffic, const int *host_of, int *role_of);

#endif
