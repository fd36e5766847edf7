/* The check macro of the unit tests: count a failure, print where, go on. */
#ifndef TDM_UNIT_H
#define TDM_UNIT_H

#include <stdio.h>

static int failures;

#define EXPECT(cond)                                         \
    do {                                                     \
        if (!(cond)) {                                       \
            printf("FAILED line %d: %s\n", __LINE__, #cond); \
            failures++;                                      \
        }                                                    \
    } while (0)

/* The closing line every test runner of the project reads. */
#define UNIT_REPORT() printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0)

#endif
