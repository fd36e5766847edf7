/*
 * The progress engine and the request tracker without MPI: a fake drive
 * function counts polls. Checks that the thread sleeps while nothing is
 * counted, polls while something is, goes back to sleep when the work is done,
 * and that several application threads can track and complete requests at
 * once (run under ThreadSanitizer by `make tsan`).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "unit.h"
#include "core/progress.h"
#include "core/request.h"

static atomic_long drives;

static void fake_drive(void *context)
{
    (void)context;
    atomic_fetch_add(&drives, 1);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A distinct fake request handle per number (never passed to MPI). */
static MPI_Request fake(uintptr_t n)
{
    MPI_Request r;
    memset(&r, 0, sizeof r);
    uintptr_t v = 0x1000 + n * 16;
    memcpy(&r, &v, sizeof r < sizeof v ? sizeof r : sizeof v);
    return r;
}

enum { THREADS = 4, PER_THREAD = 2000 };

static void *app_thread(void *arg)
{
    uintptr_t base = (uintptr_t)arg * PER_THREAD;
    for (uintptr_t i = 0; i < PER_THREAD; i++)
        tdm_request_started(fake(base + i), 1 << 20);
    for (uintptr_t i = 0; i < PER_THREAD; i++)
        tdm_request_completed(fake(base + i));
    return NULL;
}

int main(void)
{
    char *env[] = {NULL};
    tdm_config_parse(tdm_config_table, TDM_CFG_COUNT, env, tdm_config, NULL, NULL);
    tdm_eager_limit = 4096; /* what tdm_progress_start sets from TANDEM_EAGER_LIMIT */
    EXPECT(tdm_progress_engine_start(fake_drive, NULL, TDM_POLL_SLEEP, 20, -1) == 0);

    /* Nothing counted: the thread sleeps. */
    sleep_ms(50);
    EXPECT(atomic_load(&drives) == 0);

    /* Small operations stay below the eager limit and wake nothing. */
    tdm_request_started(fake(1), 4096);
    sleep_ms(20);
    EXPECT(tdm_request_outstanding() == 0 && atomic_load(&drives) == 0);

    /* A large one wakes the thread, which polls until it completes. */
    tdm_request_started(fake(2), 1 << 20);
    EXPECT(tdm_request_outstanding() == 1);
    sleep_ms(50);
    long during = atomic_load(&drives);
    EXPECT(during > 0);
    tdm_request_completed(fake(2));
    EXPECT(tdm_request_outstanding() == 0 && tdm_request_known() == 0);
    sleep_ms(20);
    long after = atomic_load(&drives);
    sleep_ms(50);
    EXPECT(atomic_load(&drives) == after); /* asleep again */

    /* Persistent requests: counted while started, known until freed. */
    tdm_request_persistent(fake(3), 1 << 20);
    tdm_request_persistent(fake(4), 16);
    EXPECT(tdm_request_outstanding() == 0 && tdm_request_known() == 2);
    tdm_request_start_persistent(fake(3));
    tdm_request_start_persistent(fake(4));
    EXPECT(tdm_request_outstanding() == 1);
    tdm_request_completed(fake(3));
    EXPECT(tdm_request_outstanding() == 0 && tdm_request_known() == 2);
    tdm_request_start_persistent(fake(3));
    tdm_request_freed(fake(3));
    tdm_request_freed(fake(4));
    EXPECT(tdm_request_outstanding() == 0 && tdm_request_known() == 0);

    /* Several application threads at once, 8000 requests through the table. */
    pthread_t threads[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, app_thread, (void *)(t + 1));
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    EXPECT(tdm_request_outstanding() == 0 && tdm_request_known() == 0);

    /* The application inside a blocking call: the thread does not poll. */
    tdm_request_started(fake(5), 1 << 20);
    tdm_progress_blocking_enter();
    sleep_ms(30);
    long blocked_start = atomic_load(&drives);
    sleep_ms(50);
    EXPECT(atomic_load(&drives) == blocked_start);
    tdm_progress_blocking_leave();
    tdm_request_completed(fake(5));

    tdm_progress_engine_stop();
    printf("%d polls in all\n", (int)atomic_load(&drives));
    UNIT_REPORT();
    return failures ? 1 : 0;
}
