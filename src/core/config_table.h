/*
 * Every TANDEM_* environment variable, in one table. The parser (config.c),
 * TANDEM_VERBOSE's printout and docs/ENVIRONMENT.md (tools/envdoc.c) are all
 * made from it; no other code reads the environment.
 *
 * TDM_CONFIG(ID, NAME, TYPE, DEFAULT, MIN, MAX, CHOICES, DESCRIPTION)
 *   TYPE     BOOL, INT, SIZE (bytes, with an optional k/m/g suffix), ENUM or STRING
 *   MIN/MAX  the accepted range of INT and SIZE
 *   CHOICES  the accepted words of an ENUM, separated by '|' (NULL otherwise)
 */
TDM_CONFIG(DISABLE, "TANDEM_DISABLE", BOOL, "0", 0, 1, NULL,
           "Pass every MPI call straight to the MPI library: Tandem changes nothing.")
TDM_CONFIG(VERBOSE, "TANDEM_VERBOSE", INT, "0", 0, 2, NULL,
           "0 prints warnings only; 1 also prints the effective configuration on rank 0 "
           "at MPI_Init; 2 prints it on every rank.")
TDM_CONFIG(REQUIRE_THREADS, "TANDEM_REQUIRE_THREADS", BOOL, "0", 0, 1, NULL,
           "Stop every rank (exit status 1) when the MPI library cannot provide "
           "MPI_THREAD_MULTIPLE, instead of running in pass-through mode.")
TDM_CONFIG(TRACE, "TANDEM_TRACE", BOOL, "0", 0, 1, NULL,
           "Print a line on stderr for every MPI call Tandem intercepts: rank, function "
           "and the language of the call (C or Fortran).")
