/* Completion calls claim a receive's entry before the MPI library completes
   the request (monitor.h, tdm_monitor_claim): the interleaving that lost a
   receive with two threads, replayed by hand. Thread A's request completes
   and its handle is at once B's new request, remembered before A settles;
   each completion must record its own receive, once. One process. */
#include <mpi.h>
#include <stdint.h>

#include "core/runtime.h"
#include "monitor/monitor.h"
#include "tandem.h"
#include "unit.h"

static MPI_Status received(int bytes)
{
    MPI_Status st = {0};
    st.MPI_SOURCE = 0;
    st.MPI_TAG = 1;
    st.MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements(&st, MPI_BYTE, bytes);
    return st;
}

int main(int argc, char **argv)
{
    PMPI_Init(&argc, &argv);
    tdm_active = 1;
    tdm_monitor_init();
    EXPECT(tandem_monitor_start() == MPI_SUCCESS);

    MPI_Request handle; /* a handle value the MPI library hands out twice */
    PMPI_Irecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &handle);
    MPI_Request same = handle;
    PMPI_Request_free(&same);

    void *claim_a, *claim_b;
    tdm_monitor_posted_recv(handle, MPI_COMM_WORLD, 0);   /* A posts */
    EXPECT(tdm_monitor_claim(1, &handle, &claim_a) == 1); /* A waits */
    tdm_monitor_posted_recv(handle, MPI_COMM_WORLD, 0);   /* freed, and B's at once */
    MPI_Status a = received(100), b = received(200);
    tdm_monitor_settle(1, &claim_a, NULL, 1, &a, 0, 0);   /* A's wait returns */
    EXPECT(tdm_monitor_claim(1, &handle, &claim_b) == 1); /* B waits: its entry is there */
    tdm_monitor_settle(1, &claim_b, NULL, 1, &b, 0, 0);

    /* A request that does not complete (a test that fails) is remembered again. */
    void *claim_c;
    tdm_monitor_posted_recv(handle, MPI_COMM_WORLD, 0);
    EXPECT(tdm_monitor_claim(1, &handle, &claim_c) == 1);
    tdm_monitor_settle(1, &claim_c, NULL, 0, NULL, 0, 0);
    EXPECT(tdm_monitor_receives_pending() == 1);
    EXPECT(tdm_monitor_claim(1, &handle, &claim_c) == 1);
    MPI_Status c = received(300);
    tdm_monitor_settle(1, &claim_c, NULL, 1, &c, 0, 0);
    EXPECT(tdm_monitor_receives_pending() == 0);

    unsigned long long msgs[1] = {0}, bytes[1] = {0};
    EXPECT(tandem_monitor_read(TANDEM_MONITOR_P2P_RECV, msgs, bytes, NULL) == MPI_SUCCESS);
    printf("received: %llu messages, %llu bytes\n", msgs[0], bytes[0]);
    EXPECT(msgs[0] == 3 && bytes[0] == 600);
    UNIT_REPORT();
    PMPI_Finalize();
    return failures != 0;
}
