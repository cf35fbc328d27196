/* The job report's test program (tests/mpi/test_job_report.py), run on 4 ranks. Rank r keeps
 * r + 1 blocks of 1,000,000 bytes outside MPI calls and, inside MPI_Pcontrol(1) ..
 * MPI_Pcontrol(0) (region "pcontrol-1"), 2 blocks of 7000 bytes; then every rank
 * reaches a barrier. With the argument "kill", rank 2 then raises SIGTERM on itself
 * (the other ranks go on to MPI_Finalize, where the job is torn down). With "sigkill"
 * (tests/mpi/test_job_killed_rank.py, under a short timeline flush period), rank 2 waits
 * until its profile file has grown twice (two timeline flushes, the second one begun
 * after the barrier, so it holds samples that see every block) and SIGKILLs itself:
 * its file has no snapshot, only the timeline; exit 3 if the file never grows.
 * With "segv" rank 1 then dereferences a null pointer, with "abort" rank 2 calls
 * MPI_Abort(MPI_COMM_WORLD, 17) (tests/mpi/test_job_crashed_rank.py): the other ranks
 * wait in a second barrier the failed rank never reaches, until the launcher kills them.
 * Without an argument, every rank frees its blocks and finalizes. */
#include <dirent.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BIG 1000000
#define SMALL 7000

/* Size of this process's profile file (HEAPSCOPE_OUTPUT_DIR/heapscope.*.r2.*.<pid>.hsp). */
static long own_file_size(void)
{
    const char *dir = getenv("HEAPSCOPE_OUTPUT_DIR");
    char tail[64], mid[32], path[4096];
    snprintf(tail, sizeof tail, ".%d.hsp", (int)getpid());
    snprintf(mid, sizeof mid, ".r%d.", 2);
    DIR *d = opendir(dir ? dir : ".");
    if (!d)
        return -1;
    long size = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), t = strlen(tail);
        if (n > t && strcmp(e->d_name + n - t, tail) == 0 && strstr(e->d_name, mid)) {
            struct stat st;
            snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", e->d_name);
            if (stat(path, &st) == 0)
                size = (long)st.st_size;
        }
    }
    closedir(d);
    return size;
}

static void wait_for_two_flushes(void)
{
    long size = own_file_size();
    struct timespec ms10 = {0, 10000000};
    for (int grew = 0, waited = 0; grew < 2; waited++) {
        if (size < 0 || waited > 6000)   /* 60 s */
            exit(3);
        nanosleep(&ms10, NULL);
        long now = own_file_size();
        if (now > size) {
            grew++;
            size = now;
        }
    }
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *big[8];
    for (int i = 0; i <= rank; i++) {
        big[i] = malloc(BIG);
        memset(big[i], i, BIG);
    }
    MPI_Pcontrol(1);
    char *small[2];
    for (int i = 0; i < 2; i++) {
        small[i] = malloc(SMALL);
        memset(small[i], i, SMALL);
    }
    MPI_Pcontrol(0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (argc > 1 && strcmp(argv[1], "kill") == 0 && rank == 2)
        raise(SIGTERM);
    if (argc > 1 && strcmp(argv[1], "sigkill") == 0 && rank == 2) {
        wait_for_two_flushes();
        raise(SIGKILL);
    }
    if (argc > 1 && (strcmp(argv[1], "segv") == 0 || strcmp(argv[1], "abort") == 0)) {
        if (rank == 1 && strcmp(argv[1], "segv") == 0)
            *(volatile int *)0 = 1;
        if (rank == 2 && strcmp(argv[1], "abort") == 0)
            MPI_Abort(MPI_COMM_WORLD, 17);
        MPI_Barrier(MPI_COMM_WORLD); /* never completes: the launcher kills this rank */
    }
    for (int i = 0; i < 2; i++)
        free(small[i]);
    for (int i = 0; i <= rank; i++)
        free(big[i]);
    MPI_Finalize();
    return 0;
}
