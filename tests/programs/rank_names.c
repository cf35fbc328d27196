/* The rank and job in profile file names (tests/mpi/test_rank_names.py): run with the
 * launchers' variables set by hand, no MPI. One block of 4321 bytes, so the test
 * can tell the file holds this run's counts. */
#include <stdlib.h>
#include <string.h>

int main(void)
{
    char *p = malloc(4321);
    memset(p, 1, 4321);
    free(p);
    return 0;
}
