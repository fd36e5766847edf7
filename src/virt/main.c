/*
 * The process's main of a program built with `tandem cc` (the static
 * library libtandem-virt-main.a): include/virt/mpi.h renamed the program's
 * main to TMPI_Main, which each virtual rank runs.
 */
#include <stdio.h>

#include "tmpi.h"

/* A C program's main, or a C++ program's int main(int, char **) (C's
   linkage, include/virt/mpi.h); a C++ program's int main() is a C++
   function, found by its mangled name. */
int TMPI_Main(int argc, char **argv) __attribute__((weak));
int TMPI_Main_of_cxx(void) __asm__("_Z9TMPI_Mainv") __attribute__((weak));

static int main_of_cxx(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return TMPI_Main_of_cxx();
}

int main(int argc, char **argv)
{
    if (!TMPI_Main && !TMPI_Main_of_cxx) {
        fprintf(stderr, "tandem virt: the program has no main\n");
        return 1;
    }
    return TMPI_Run(argc, argv, TMPI_Main ? TMPI_Main : main_of_cxx);
}
