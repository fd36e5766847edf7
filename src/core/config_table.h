/*
 * Every TANDEM_* environment variable, in one table. The parser (config.c),
 * TANDEM_VERBOSE's printout and docs/ENVIRONMENT.md (tools/envdoc.c) are all
 * made from it; no other code reads the environment.
 *
 * TDM_CONFIG(ID, NAME, TYPE, DEFAULT, MIN, MAX, CHOICES, DESCRIPTION, WHEN)
 *   TYPE     BOOL, INT, SIZE (bytes, with an optional k/m/g suffix), ENUM or STRING
 *   MIN/MAX  the accepted range of INT and SIZE
 *   CHOICES  the accepted words of an ENUM, separated by '|'; for a SIZE, an
 *            optional word (auto) that lets Tandem choose; NULL otherwise
 *   WHEN     one line: the measured case where a value other than the default
 *            is better (with its numbers and the docs/PERFORMANCE.md section),
 *            or, for a switch that is not about speed, what it is for ("Use:").
 *            A variable without such a case has no place here: its value is
 *            fixed in the code.
 */
TDM_CONFIG(DISABLE, "TANDEM_DISABLE", BOOL, "0", 0, 1, NULL,
           "Pass every MPI call straight to the MPI library: Tandem changes nothing.",
           "Use: compare a run with and without Tandem, or rule it out of a problem, without "
           "relinking or changing the launch.")
TDM_CONFIG(VERBOSE, "TANDEM_VERBOSE", INT, "0", 0, 2, NULL,
           "0 prints warnings only; 1 also prints the effective configuration on rank 0 "
           "at MPI_Init; 2 prints it on every rank.",
           "Use: 1 shows the effective settings and what auto decided (docs/AUTO.md); 2 adds "
           "every rank's settings and, at MPI_Finalize, the thread's polls, moves and CPU time.")
TDM_CONFIG(REQUIRE_THREADS, "TANDEM_REQUIRE_THREADS", BOOL, "0", 0, 1, NULL,
           "Stop every rank (exit status 1) when TANDEM_PROGRESS starts Tandem's threads "
           "and the MPI library cannot provide MPI_THREAD_MULTIPLE, instead of running "
           "without them (as with TANDEM_PROGRESS=off).",
           "Use: a job that counts on the progress thread (a measurement, an overlap it needs) "
           "and would rather stop than run without it on an MPI that lacks MPI_THREAD_MULTIPLE.")
TDM_CONFIG(STRICT, "TANDEM_STRICT", BOOL, "0", 0, 1, NULL,
           "Stop every rank at MPI_Init (exit status 1) when a TANDEM_* variable is unknown "
           "or its value invalid, instead of warning and running with the default: for batch "
           "jobs that would rather fail than run with settings they did not ask for.",
           "Use: batch jobs that would rather fail at MPI_Init than run with a setting they did "
           "not ask for.")
TDM_CONFIG(TRACE, "TANDEM_TRACE", BOOL, "0", 0, 1, NULL,
           "Print a line on stderr for every MPI call Tandem intercepts: rank, function "
           "and the language of the call (C, Fortran, or Fortran 2008 for the mpi_f08 "
           "module).",
           "Use: see which MPI calls go through Tandem, in which language binding (a call that "
           "bypasses it, the last call before a hang).")
TDM_CONFIG(PROGRESS, "TANDEM_PROGRESS", ENUM, "auto", 0, 0, "off|drive|proxy|auto",
           "How nonblocking operations are moved in the background: off; drive (a progress "
           "thread drives the MPI library while operations above TANDEM_EAGER_LIMIT are "
           "outstanding, and sleeps otherwise); proxy (such operations are handed to the "
           "progress thread, which completes them with MPI_Testsome, and the application "
           "gets a generalized request whose MPI_Wait sleeps instead of spinning); or auto, "
           "the default: drive, waiting on the sockets (TANDEM_POLL=event), where the job's "
           "ranks span hosts; proxy where they all run on one host that leaves a spare CPU "
           "per rank (twice as many CPUs as ranks, or OMP_NUM_THREADS + 1 per rank); off on "
           "one host without, there with waits that sleep between their polls where the "
           "ranks outnumber the host's CPUs (TANDEM_WAIT; "
           "the decision table and its measurements: docs/AUTO.md; TANDEM_VERBOSE=1 says which "
           "and why).",
           "proxy on one host with more ranks than cores over TCP, on MPICH: a 4-rank ghost-cell "
           "step on 2 cores took 6.83 ms against 20.00 natively (\"Ghost-cell exchange (strong "
           "scaling)\"); over shared memory auto's sleeping waits do as well (\"Real "
           "applications: NPB and ghost cells\"); auto already runs drive where the ranks span "
           "hosts.")
TDM_CONFIG(POLL, "TANDEM_POLL", ENUM, "yield", 0, 0, "yield|sleep|event",
           "How the progress thread waits between two polls: yield the CPU (the "
           "default on one host: measured best on a shared core; it does not yield while an "
           "application thread waits for a proxy; across hosts the default is event with "
           "drive and sleep with proxy), sleep with a pause that grows up "
           "to 50 us while no new work arrives, or event: sleep until one of "
           "the process's sockets has news (a message, a connection, send space) or a pause "
           "that grows up to 1 ms passed (for TCP networks; see "
           "docs/PERFORMANCE.md).",
           "event with drive over TCP (the default where the ranks span hosts): shaped 2 "
           "Gbit/s, MPICH drive, 1 MiB with one side computing, 95-99% hidden "
           "against 54-75% yielding (\"Waiting on sockets\"); sleep hid more of a receive posted "
           "before the computation (shared memory 10-79% against 0-32%) at 1.2-4.8 times the "
           "transfer time (\"Tried and not kept: pulled onto a lent core\"); sleep with proxy "
           "across hosts (its default there): a proxied blocking 1 MiB send on Open MPI in "
           "0.89 ms against 7.7-8.8 yielding (docs/KNOWN_ISSUES.md).")
TDM_CONFIG(WAIT, "TANDEM_WAIT", ENUM, "auto", 0, 0, "auto|spin|lend",
           "How MPI_Send, MPI_Ssend, MPI_Rsend, MPI_Recv and MPI_Sendrecv wait for a message "
           "above TANDEM_EAGER_LIMIT while TANDEM_PROGRESS is on: spin (inside the MPI "
           "library, as without Tandem), or lend (post it nonblocking and poll it with short "
           "sleeps, leaving the core to a progress thread of another rank of the node). auto "
           "lends when the progress thread has no core of its own (no spare CPU to be pinned to, "
           "and fewer than twice as many CPUs as ranks for unbound ranks), to peers not reached "
           "through "
           "the MPI library's shared memory, and sleeps only while a progress thread of "
           "another rank runs on its core (with TANDEM_PROGRESS_CPUS=none: while one has work). "
           "While TANDEM_PROGRESS is off, lend makes every blocking wait (those calls at any "
           "size, and MPI_Wait, Waitall, Waitany and Waitsome) poll and sleep between its "
           "polls, leaving the core to the host's other ranks, and auto does so where the job "
           "runs on one host whose ranks outnumber the CPUs they may run on.",
           "spin where a program waits at once for large receives over shared memory (nothing to "
           "overlap): Open MPI 4 MiB Irecv + Wait against a blocked MPI_Send 0.19 ms against "
           "0.25-0.33 with auto (README, known issues; \"Off a lent core while the application "
           "waits\"); lend over loopback TCP, MPICH, sender computing: 4 MiB 48% hidden against 9% "
           "(drive; \"The node is the host\").")
TDM_CONFIG(PROGRESS_CPUS, "TANDEM_PROGRESS_CPUS", STRING, "auto", 0, 0, NULL,
           "Where the progress thread runs: auto (a CPU that no rank of the node, the host, is "
           "bound to, else it shares the rank's CPUs, and those of the node's ranks while "
           "TANDEM_WAIT lends), share (as auto without a spare CPU, leaving spare ones alone), "
           "none (where the OS puts it: Tandem never sets its affinity), or one CPU per rank of "
           "the host, in host rank order, as "
           "a list such as 2,3 or 2_3.",
           "A list that puts the thread on its rank's CPU: a post after 100-1000 us idle took 4-9 "
           "us against 12-16 on the other CPU, where auto puts it (MPICH, a rank bound to CPU 0; "
           "\"What a post costs after the process was idle\"). Use: none for a program that places "
           "every thread of its processes itself; share keeps spare CPUs for other work (the "
           "lending tests use it to stand for a node without one).")
TDM_CONFIG(GHOSTS, "TANDEM_GHOSTS", INT, "0", 0, 64, NULL,
           "Progress processes per host (DART-MPI's design, Casper's way): at MPI_Init the G "
           "processes with the highest ranks on each host leave the application's world; the "
           "program sees a job without them (MPI_COMM_WORLD's size, ranks, group, statuses; "
           "tandem run --ghosts G launches them). On MPICH, and on Open MPI over UCX (pml ucx), "
           "they serve the program's MPI_Win_allocate windows, which live in their host's "
           "shared memory: one-sided "
           "operations complete while the target computes, with no progress thread "
           "(docs/ONESIDED.md).",
           "Use: 1 for a program whose one-sided targets compute without MPI calls, on MPICH "
           "or Open MPI on UCX, with a spare core per host: a passive 8 MiB get from a computing "
           "target took 48 ms "
           "against 613 ms natively (2 cores, loaded; docs/ONESIDED.md). Each host needs more "
           "than G processes.")
TDM_CONFIG(RMA_OFFLOAD_LIMIT, "TANDEM_RMA_OFFLOAD_LIMIT", SIZE, "64k", 0, 1LL << 40, NULL,
           "With progress processes serving a window (TANDEM_GHOSTS): an MPI_Put or MPI_Get "
           "of at least this many contiguous bytes is handed to the origin's own progress "
           "process while the origin computes, which copies the data between the origin's "
           "memory and the target's (Linux's process_vm_readv/writev) where the target is on "
           "the origin's host, and carries the operation out to the target host's progress "
           "process where it is not; the origin's next flush, unlock or fence waits for its "
           "answer (DART-MPI's origin offload). 0: never.",
           "0 where the origin has nothing to compute between an operation and its flush.")
TDM_CONFIG(REORDER, "TANDEM_REORDER", STRING, "", 0, 0, NULL,
           "A MAPPING file of tandem place: the processes stay where they were started, and "
           "Tandem renumbers the program's MPI_COMM_WORLD so that rank i is the process "
           "launched in the slot the mapping gives rank i (host index x cores per host + "
           "core, the launch's block order); every rank argument and status follows.",
           "Use: apply a placement inside a run whose processes cannot be moved "
           "(docs/PLACEMENT.md); tandem run --placement moves them at launch instead.")
TDM_CONFIG(IO_OFFLOAD, "TANDEM_IO_OFFLOAD", BOOL, "1", 0, 1, NULL,
           "While TANDEM_PROGRESS is drive or proxy, a worker thread executes MPI_File_iread, "
           "MPI_File_iwrite, MPI_File_iread_at and MPI_File_iwrite_at, so that they overlap "
           "with computation; 0 leaves them to the MPI library.",
           "0 where no core is idle for the I/O worker: 2 ranks on 2 cores writing 64 MiB, 48-52% "
           "of the write hidden at +24 to +29% natively against 0-30% at +25 to +55% offloaded "
           "(\"MPI-IO overlap\").")
TDM_CONFIG(EAGER_LIMIT, "TANDEM_EAGER_LIMIT", SIZE, "auto", 0, 1LL << 40, "auto",
           "Operations of at most this many bytes are left to the MPI library alone: it "
           "sends them eagerly, and proxying them only delays their completion (measured: "
           "docs/PERFORMANCE.md, eager limit). auto is 64k with the proxy strategy and 4k "
           "with drive, on every MPI and transport measured. With TANDEM_COLL=tandem, a "
           "collective whose messages are all of at most this size and all posted by the "
           "call is left to the MPI library and the application's calls too: its post "
           "does not wake the progress thread.",
           "0 with drive where an Open MPI receiver computes: 1-4 KiB messages over the shaped "
           "network 71-72% hidden against 55-57% left to the MPI library (\"Eager limit\").")
TDM_CONFIG(MONITOR, "TANDEM_MONITOR", BOOL, "0", 0, 1, NULL,
           "Record who sends how much to whom (point-to-point, collectives, one-sided, I/O) "
           "for the whole run and write the files at MPI_Finalize: PREFIX.<rank>.prof in "
           "Open MPI's monitoring format and PREFIX.json for the whole job.",
           "Use: who sends how much to whom over the whole run (tandem report, Open MPI's "
           "monitoring tools); a monitored send costs 3-8 ns (\"Monitoring overhead\").")
TDM_CONFIG(MONITOR_OUTPUT, "TANDEM_MONITOR_OUTPUT", STRING, "", 0, 0, NULL,
           "PREFIX of the monitoring files (a path without extension). Unset: tandem-monitor "
           "in the working directory, or tandem-monitor-N when those files exist (Tandem "
           "never overwrites a file you did not name).",
           "Use: put the monitoring files where the job wants them (its own directory, a prefix "
           "per run).")
TDM_CONFIG(COLL, "TANDEM_COLL", ENUM, "native", 0, 0, "native|tandem",
           "Who runs the nonblocking collectives: native (the MPI library, progressed by "
           "the progress thread like any request) or tandem (Tandem's own schedules, moved "
           "by the progress thread; needs TANDEM_PROGRESS=drive or proxy). Tandem runs every "
           "MPI_I* collective on intra-communicators, with any operation (non-commutative ones "
           "are applied in rank order); the rest stay native.",
           "tandem over a network: shaped 2 Gbit/s, 2 ranks computing, 4 MiB ibcast, iscatter, "
           "iallreduce, ialltoall 47-86% overlapped (78-84% with TANDEM_POLL=event) against 0% "
           "natively, pure time within native + 5% (\"Short turns\").")
TDM_CONFIG(COLL_BLOCKING, "TANDEM_COLL_BLOCKING", ENUM, "native", 0, 0, "native|tandem",
           "Who runs the blocking collectives (MPI_Bcast, MPI_Allreduce, ...): native, or "
           "tandem (the same schedules as the nonblocking ones, run by the calling thread; "
           "monitoring then records their messages as coll_internal).",
           "tandem where MPICH's blocking collectives stall with more ranks than cores: 4 ranks "
           "on 2 cores, 64 KiB bcast 0.015 ms against 8.0, scatter 0.026 against 12.0 (\"FastMPJ's "
           "micro-benchmark\").")
TDM_CONFIG(COLL_SHM, "TANDEM_COLL_SHM", BOOL, "1", 0, 1, NULL,
           "On a communicator whose ranks share one node, Tandem's barrier and reduce, and its "
           "bcast, scatter, gather, allgather and allreduce where their algorithm is shared "
           "(auto chooses it on more than 2 ranks), move data through shared-memory slots "
           "(one copy in, one copy out) when it fits a slot; 0 keeps them all on "
           "point-to-point messages.",
           "0 where ranks of one host stand for separate nodes (the benchmarks over TCP and the "
           "shaped network); messages beat the slots in 3 of 12 cells on 4 ranks, Open MPI 64 KiB "
           "iscatter 27 us against 39 (\"Shared memory or messages\", "
           "docs/perf/shm-or-messages/np4.txt).")
TDM_CONFIG(COLL_SHM_LIMIT, "TANDEM_COLL_SHM_LIMIT", SIZE, "64m", 0, 1LL << 40, NULL,
           "The most bytes of shared-memory slots one process holds, over all its "
           "communicators: its own segments, 1 MiB per communicator (16 slots of 64 KiB; 1.25 "
           "MiB where the blocking collectives run in Tandem too). "
           "A communicator made when any of its ranks is at the limit gets no slots (its "
           "collectives take point-to-point messages); freeing one gives its bytes back.",
           "Use: bound the shared memory (/dev/shm) the slots take where the node has little of "
           "it or the program makes many communicators (not a speed setting: none measured).")
TDM_CONFIG(COLL_TUNING, "TANDEM_COLL_TUNING", STRING, "", 0, 0, NULL,
           "A tuning file: lines 'COLLECTIVE ALGORITHM [bytes=LO-HI] [ranks=LO-HI]' that choose "
           "the algorithm of Tandem's collectives by size and number of ranks, first match "
           "first; a line without conditions forces one everywhere (the collectives and their "
           "algorithms: docs/COLLECTIVES.md). Every rank must read the same file.",
           "The slots (shared) for 4 KiB bcasts and allreduces on 2 MPICH ranks: 5.9 against 8.4 "
           "us and 4.6 against 9.1, where at 64 KiB the built-in messages win, 6.0 against 22.4 "
           "(\"Shared memory or messages\"): a line 'bcast shared bytes=2k-8k ranks=2'.")
TDM_CONFIG(VIRT_RANKS, "TANDEM_VIRT_RANKS", INT, "1", 1, 4096, NULL,
           "Virtual ranks per core of a program built with `tandem cc` (libtandem-virt): each "
           "core the process is given runs this many ranks as user-level threads "
           "(docs/VIRTUAL.md); `tandem run --virtual V` sets it. libtandem.so ignores it.",
           "Use: more ranks than cores, each a user-level thread whose blocking calls switch to "
           "another rank of its core (docs/VIRTUAL.md).")
TDM_CONFIG(VIRT_CORES, "TANDEM_VIRT_CORES", INT, "1", 1, 1024, NULL,
           "Kernel threads of each process of a program built with `tandem cc`, one per core, "
           "each pinned to the next CPU the process may run on; `tandem run --cores C` sets it.",
           "Use: spread one process's virtual ranks over C cores (H x C x V ranks in all).")
TDM_CONFIG(VIRT_PROGRESS, "TANDEM_VIRT_PROGRESS", ENUM, "auto", 0, 0, "off|thread|auto",
           "With virtual ranks in several processes (hosts): thread, a thread of each process "
           "polls the real MPI while the ranks compute, so that large messages between "
           "processes move meanwhile, and sleeps on the process's sockets when nothing is on "
           "its way; off, the real MPI moves only when a core switches ranks or idles; auto "
           "(the default), thread where the host has a CPU that no core of its processes "
           "takes, else off. Said once under TANDEM_VERBOSE=1.",
           "off where the hosts' CPUs are all taken by cores, which auto cannot see on simulated "
           "hosts sharing a machine (`tandem run --hosts` sets it there: on 2 hosts on 2 CPUs "
           "the stencil at V = 2 took 6.5 ms with the thread against 4.8); thread on a host "
           "with a spare CPU: 4.5 against 5.6 ms at V = 2 (docs/VIRTUAL.md).")
TDM_CONFIG(VIRT_WTIME, "TANDEM_VIRT_WTIME", ENUM, "wall", 0, 0, "wall|rank",
           "What MPI_Wtime tells a virtual rank: wall, the clock on the wall, as a process "
           "would see it; rank, the rank's own time (TinyMPI's rank-POV time), a clock that "
           "stops while other ranks of its core run, so that it counts the rank's own "
           "computation and its core's idle waits as if the rank had the core alone.",
           "rank: time a rank's own work while V ranks share a core (a 0.1 s computation "
           "reads 0.1 s, where wall reads V times that; tests/c/virt_wtime.c); it costs two "
           "clock reads per switch.")
TDM_CONFIG(VIRT_EAGER, "TANDEM_VIRT_EAGER", SIZE, "1m", 0, 1LL << 30, NULL,
           "With virtual ranks in several processes: the real MPI's eager limit for their "
           "messages over TCP (Open MPI's btl_tcp_eager_limit and btl_tcp_max_send_size, "
           "UCX's UCX_RNDV_THRESH for MPICH), set before MPI_Init unless the environment "
           "sets that variable; 0 leaves the MPI's own. A message up to it goes out at once, "
           "the kernel's socket buffers carrying it while the ranks compute; a larger one "
           "waits for a handshake that moves only when the processes poll.",
           "0 (the MPI's own limit): none measured faster; 1 MiB took MPICH's stencil at V = 2 "
           "and 4 from 11.6 to 7.1-7.4 ms per step on 2 hosts (docs/perf/virt/eager-ab).")
TDM_CONFIG(VIRT_STACK, "TANDEM_VIRT_STACK", SIZE, "1m", 16384, 1LL << 30, NULL,
           "The stack of each virtual rank, below which lies a guard page: a rank that "
           "overflows it is stopped with a message naming the rank and this variable. An "
           "invalid value stops the program before any rank starts.",
           "Use: ranks with deep recursion or large local arrays (a bigger stack), or many "
           "ranks per process (a smaller one).")
