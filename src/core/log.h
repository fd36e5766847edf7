/* Messages to the user, on stderr, prefixed with "tandem" and the rank. */
#ifndef TDM_LOG_H
#define TDM_LOG_H

/* Print "tandem[RANK]: warning: ..." now. Any thread. */
void tdm_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "tandem[RANK]: error: ..." now: Tandem stops the run. Any thread. */
void tdm_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "tandem[RANK]: ..." now. Any thread. */
void tdm_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Keep a warning until the rank is known (configuration warnings come before
   MPI_Init). Application thread, before MPI_Init only. */
void tdm_log_defer(void *context, const char *message);

/* Print the kept warnings if 'print' is set, then forget them. */
void tdm_log_flush_deferred(int print);

#endif
