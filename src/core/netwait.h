/*
 * Waiting for the network instead of a timer: the progress thread's
 * TANDEM_POLL=event policy blocks on the process's sockets (those the MPI
 * library opened for its TCP transports), so it runs when a peer's message,
 * handshake or acknowledgement arrives, and not otherwise. Tandem only
 * watches the sockets; reading and writing them stays the MPI library's.
 */
#ifndef TDM_NETWAIT_H
#define TDM_NETWAIT_H

/* Open the watch; 0, or -1 when the system cannot (the caller then sleeps on
   a timer). Progress thread. */
int tdm_netwait_open(void);

/* Watch every socket the process has now, unless the last scan is less
   than 'min_age_ms' old (new connections appear while the MPI library runs:
   the caller rescans when work arrives, after a quiet wait, and at once when
   a listening socket reported a connection). Returns how many sockets are
   watched, or -1 when the scan was skipped. */
enum { TDM_NETWAIT_RESCAN_MS = 50 };
int tdm_netwait_scan(int min_age_ms);

/* Block until a watched socket has news or 'us' microseconds passed. Returns
   0 on the timeout, else a mask: 1 a socket reported, 2 a listening one did
   (rescan after the next poll). */
int tdm_netwait(int us);

void tdm_netwait_close(void);

#endif
