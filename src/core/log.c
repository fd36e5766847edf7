#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/runtime.h"

#define DEFERRED_MAX 32

static char deferred[DEFERRED_MAX][512];
static int deferred_count;

static void vlog(const char *kind, const char *fmt, va_list ap)
{
    char line[1024];
    int n;
    if (tdm_world_rank >= 0)
        n = snprintf(line, sizeof line, "tandem[%d]: %s", tdm_world_rank, kind);
    else
        n = snprintf(line, sizeof line, "tandem: %s", kind);
    if (n < 0 || (size_t)n >= sizeof line)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    /* One fputs per line so that lines of several threads do not mix. */
    strncat(line, "\n", sizeof line - strlen(line) - 1);
    fputs(line, stderr);
}

void tdm_log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("warning: ", fmt, ap);
    va_end(ap);
}

void tdm_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("error: ", fmt, ap);
    va_end(ap);
}

void tdm_log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
}

void tdm_log_defer(void *context, const char *message)
{
    (void)context;
    if (deferred_count < DEFERRED_MAX)
        snprintf(deferred[deferred_count++], sizeof deferred[0], "%s", message);
}

void tdm_log_flush_deferred(int print)
{
    for (int i = 0; print && i < deferred_count; i++)
        tdm_log_warn("%s", deferred[i]);
    deferred_count = 0;
}
