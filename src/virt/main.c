/*
 * The process's main of a program built with `tandem cc` (the static
 * library libtandem-virt-main.a): include/virt/mpi.h renamed the program's
 * main to TMPI_Main, which each virtual rank runs.
 */
#include "tmpi.h"

int TMPI_Main(int argc, char **argv);

int main(int argc, char **argv)
{
    return TMPI_Run(argc, argv, TMPI_Main);
}
