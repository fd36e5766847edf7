/* A program that never calls MPI: loading Tandem must change nothing. */
#include <stdio.h>

int main(int argc, char **argv)
{
    printf("no MPI here: %d argument(s), first %s\n", argc - 1, argc > 1 ? argv[1] : "(none)");
    return 0;
}
