/*
 * The process's main of a program built with `tandem cc` (the static
 * library libtandem-virt-main.a): include/virt/mpi.h renamed the program's
 * main to TMPI_Main, which each virtual rank runs; a program written for
 * TinyMPI has TMPI_main instead.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "tmpi.h"

/* A C program's main, or a C++ program's int main(int, char **) (C's
   linkage, include/virt/mpi.h); a C++ program's int main() is a C++
   function, found by its mangled name. */
int TMPI_Main(int argc, char **argv) __attribute__((weak));
int TMPI_Main_of_cxx(void) __asm__("_Z9TMPI_Mainv") __attribute__((weak));
/* A program written for TinyMPI: its entry, run between the rank's
   TMPI_Init and TMPI_Finalize (include/tmpi.h). */
int TMPI_main(int argc, char **argv) __attribute__((weak));
/* `tandem cc --privatize`: the names of the program's written global and
   static variables, in a file it generates and links in. */
extern const char *const TMPI_private_names[] __attribute__((weak));
/* And the program built as a shared object, from a file it generates
   (.incbin): each rank runs a copy of it where a process has several
   cores. */
extern const char TMPI_program_image[] __attribute__((weak));
extern const char TMPI_program_image_end[] __attribute__((weak));

static int main_of_tinympi(int argc, char **argv)
{
    int provided, code;
    if ((code = TMPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided)) != MPI_SUCCESS)
        return code;
    code = TMPI_main(argc, argv);
    TMPI_Finalize();
    return code;
}

static int main_of_cxx(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return TMPI_Main_of_cxx();
}

/* Exit handlers (C++'s destructors of static objects, atexit) registered by
   a virtual rank of a privatized program: the runtime runs them for each
   rank with that rank's copies in place (an object built by every rank in
   its copy of one variable would otherwise be destroyed that many times in
   one copy). Any other goes to the C library's. */
int __cxa_atexit(void (*handler)(void *), void *arg, void *dso);
int __cxa_atexit(void (*handler)(void *), void *arg, void *dso)
{
    if (TMPI_private_names && TMPI_Private_atexit(handler, arg))
        return 0;
    static int (*libc)(void (*)(void *), void *, void *);
    if (!libc)
        *(void **)&libc = dlsym(RTLD_NEXT, "__cxa_atexit");
    return libc ? libc(handler, arg, dso) : -1;
}

int main(int argc, char **argv)
{
    if (TMPI_private_names)
        TMPI_Set_private(TMPI_private_names, TMPI_private_names, "TMPI_private_names");
    if (TMPI_private_names && TMPI_program_image && TMPI_program_image_end)
        TMPI_Set_program_copy(TMPI_program_image,
                              (size_t)(TMPI_program_image_end - TMPI_program_image));
    if (TMPI_Main)
        return TMPI_Run(argc, argv, TMPI_Main);
    if (TMPI_main)
        return TMPI_Run(argc, argv, main_of_tinympi);
    if (TMPI_Main_of_cxx)
        return TMPI_Run(argc, argv, main_of_cxx);
    fprintf(stderr, "tandem virt: the program has no main (nor TinyMPI's TMPI_main)\n");
    return 1;
}
