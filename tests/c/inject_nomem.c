/* Fault injection: preloaded after libtandem, this library makes every
   allocation that libtandem itself asks for fail while the program has armed
   it (inject_nomem_arm(1), found with dlsym); the MPI library's and the
   program's allocations go on. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

void *__libc_malloc(size_t bytes);
void *__libc_calloc(size_t count, size_t bytes);
void *__libc_realloc(void *p, size_t bytes);

void inject_nomem_arm(int on);
void *malloc(size_t bytes);
void *calloc(size_t count, size_t bytes);
void *realloc(void *p, size_t bytes);

static volatile int armed;

void inject_nomem_arm(int on)
{
    armed = on;
}

static int refused(const void *caller)
{
    Dl_info info;
    return armed && dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, "libtandem");
}

void *malloc(size_t bytes)
{
    return refused(__builtin_return_address(0)) ? NULL : __libc_malloc(bytes);
}

void *calloc(size_t count, size_t bytes)
{
    return refused(__builtin_return_address(0)) ? NULL : __libc_calloc(count, bytes);
}

void *realloc(void *p, size_t bytes)
{
    return refused(__builtin_return_address(0)) ? NULL : __libc_realloc(p, bytes);
}
