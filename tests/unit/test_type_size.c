/*
 * tdm_impl_type_size against the MPI library's own PMPI_Type_size: for every
 * predefined datatype of the MPI standard, a few derived ones and
 * MPI_DATATYPE_NULL, the same error class and the same size. Under MPICH the
 * predefined types that are not pairs are sized from their handles without
 * a call: this program interposes PMPI_Type_size and counts the calls. One
 * process (launched by mpiexec -n 1).
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

#include "impl/impl.h"
#include "unit.h"

static int calls;

/* Every PMPI_Type_size of this process, Tandem's included, passes here. */
int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    static int (*real)(MPI_Datatype, int *);
    if (!real)
        real = (int (*)(MPI_Datatype, int *))dlsym(RTLD_NEXT, "PMPI_Type_size");
    calls++;
    return real(datatype, size);
}

/* Both answers agree; returns how many calls tdm_impl_type_size made. */
static int check(MPI_Datatype datatype, const char *name)
{
    int expected = -7, size = -7;
    int expected_rc = PMPI_Type_size(datatype, &expected);
    int before = calls;
    int rc = tdm_impl_type_size(datatype, &size);
    int made = calls - before;
    int class = rc, expected_class = expected_rc; /* MPICH's codes also number the call */
    MPI_Error_class(rc, &class);
    MPI_Error_class(expected_rc, &expected_class);
    if (class != expected_class || (rc == MPI_SUCCESS && size != expected)) {
        printf("%s: rc %d size %d, the MPI library's rc %d size %d\n", name, rc, size, expected_rc,
               expected);
        failures++;
    }
    return made;
}

#define CHECK(type) check(type, #type)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* The plain predefined types: no call under MPICH. */
    MPI_Datatype plain[] = {
        MPI_CHAR,
        MPI_SHORT,
        MPI_INT,
        MPI_LONG,
        MPI_LONG_LONG_INT,
        MPI_LONG_LONG,
        MPI_SIGNED_CHAR,
        MPI_UNSIGNED_CHAR,
        MPI_UNSIGNED_SHORT,
        MPI_UNSIGNED,
        MPI_UNSIGNED_LONG,
        MPI_UNSIGNED_LONG_LONG,
        MPI_FLOAT,
        MPI_DOUBLE,
        MPI_LONG_DOUBLE,
        MPI_WCHAR,
        MPI_C_BOOL,
        MPI_INT8_T,
        MPI_INT16_T,
        MPI_INT32_T,
        MPI_INT64_T,
        MPI_UINT8_T,
        MPI_UINT16_T,
        MPI_UINT32_T,
        MPI_UINT64_T,
        MPI_AINT,
        MPI_COUNT,
        MPI_OFFSET,
        MPI_C_COMPLEX,
        MPI_C_FLOAT_COMPLEX,
        MPI_C_DOUBLE_COMPLEX,
        MPI_C_LONG_DOUBLE_COMPLEX,
        MPI_BYTE,
        MPI_PACKED,
        MPI_INTEGER,
        MPI_REAL,
        MPI_DOUBLE_PRECISION,
        MPI_COMPLEX,
        MPI_LOGICAL,
        MPI_CHARACTER,
        MPI_DOUBLE_COMPLEX,
        MPI_CXX_BOOL,
    };
    const char *plain_names[] = {
        "MPI_CHAR",
        "MPI_SHORT",
        "MPI_INT",
        "MPI_LONG",
        "MPI_LONG_LONG_INT",
        "MPI_LONG_LONG",
        "MPI_SIGNED_CHAR",
        "MPI_UNSIGNED_CHAR",
        "MPI_UNSIGNED_SHORT",
        "MPI_UNSIGNED",
        "MPI_UNSIGNED_LONG",
        "MPI_UNSIGNED_LONG_LONG",
        "MPI_FLOAT",
        "MPI_DOUBLE",
        "MPI_LONG_DOUBLE",
        "MPI_WCHAR",
        "MPI_C_BOOL",
        "MPI_INT8_T",
        "MPI_INT16_T",
        "MPI_INT32_T",
        "MPI_INT64_T",
        "MPI_UINT8_T",
        "MPI_UINT16_T",
        "MPI_UINT32_T",
        "MPI_UINT64_T",
        "MPI_AINT",
        "MPI_COUNT",
        "MPI_OFFSET",
        "MPI_C_COMPLEX",
        "MPI_C_FLOAT_COMPLEX",
        "MPI_C_DOUBLE_COMPLEX",
        "MPI_C_LONG_DOUBLE_COMPLEX",
        "MPI_BYTE",
        "MPI_PACKED",
        "MPI_INTEGER",
        "MPI_REAL",
        "MPI_DOUBLE_PRECISION",
        "MPI_COMPLEX",
        "MPI_LOGICAL",
        "MPI_CHARACTER",
        "MPI_DOUBLE_COMPLEX",
        "MPI_CXX_BOOL",
    };
    int n = (int)(sizeof plain / sizeof plain[0]), made = 0;
    for (int i = 0; i < n; i++)
        made += check(plain[i], plain_names[i]);
#if defined(MPICH_VERSION) && !defined(OPEN_MPI)
    EXPECT(made == 0);
#else
    EXPECT(made == n); /* Open MPI's own call is already cheap: always asked */
#endif

    /* Pairs, derived types and the null handle: asked, answered alike. */
    CHECK(MPI_FLOAT_INT);
    CHECK(MPI_DOUBLE_INT);
    CHECK(MPI_LONG_INT);
    CHECK(MPI_2INT);
    CHECK(MPI_SHORT_INT);
    CHECK(MPI_LONG_DOUBLE_INT);
    CHECK(MPI_2REAL);
    CHECK(MPI_2DOUBLE_PRECISION);
    CHECK(MPI_2INTEGER);
    MPI_Datatype three, strided;
    MPI_Type_contiguous(3, MPI_DOUBLE, &three);
    MPI_Type_commit(&three);
    MPI_Type_vector(4, 2, 5, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    EXPECT(CHECK(three) == 1);
    EXPECT(CHECK(strided) == 1);
    EXPECT(CHECK(MPI_DATATYPE_NULL) == 1);
    MPI_Type_free(&three);
    MPI_Type_free(&strided);

    MPI_Finalize();
    UNIT_REPORT();
    return failures ? 1 : 0;
}
