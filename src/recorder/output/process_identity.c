/*
 * process_identity.c — who this process is in a job, as the launcher's environment
 * says (its MPI rank, its job id), for the profile's name and PROCESS chunk and the job
 * file; and the owner's access to what the recorder creates.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/lifecycle.h"
#include "output/process_identity.h"

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* The MPI rank: the first of OMPI_COMM_WORLD_RANK (Open MPI), PMIX_RANK (any PMIx
 * launcher: Open MPI 4/5's, srun --mpi=pmix), PMI_RANK (MPICH's hydra, Intel MPI, srun
 * --mpi=pmi2) and SLURM_PROCID (srun) that holds a rank number, i.e. 1 to 9
 * decimal digits and nothing else; -1 when none does. A set value that is not a
 * number is ignored with a warning (atoi would have made it rank 0) and the next
 * variable is tried. Read when the file opens: a fork child before exec
 * has the launcher's environment, not yet the rank's. */
int hsr_mpi_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v)
            continue;
        size_t digits = strspn(v, "0123456789");
        if (digits >= 1 && digits <= 9 && v[digits] == 0)
            return atoi(v);
        char msg[200];
        snprintf(msg, sizeof msg, "%s='%.40s%s' is not a rank number: ignored", vars[i], v,
                 strlen(v) > 40 ? "..." : "");
        hsr_warn(msg);
    }
    return -1;
}

/* The job: SLURM_JOB_ID (srun, and any MPI inside a Slurm allocation), else Open
 * MPI's own job id, else the PMIx namespace (PMIx launchers other than Open MPI's:
 * "prterun-host-1234@1"); "" when none is set: MPICH's hydra exports no job id (its
 * KVS name is only given through the PMI wire protocol), so its files say "job" and
 * the host and pid in each name keep them apart. '/' would make a directory of the
 * file name: it becomes '_'. */
const char *hsr_profile_job_id(void)
{
    static char safe[128];
    const char *v =
        env_or("SLURM_JOB_ID", env_or("OMPI_MCA_ess_base_jobid", env_or("PMIX_NAMESPACE", "")));
    snprintf(safe, sizeof safe, "%s", v);
    for (char *p = safe; *p; p++)
        if (*p == '/')
            *p = '_';
    return safe;
}

/* A file or directory the recorder made: the program's umask decides who else may
 * read it, never that its owner may not (umask(0777) before a fork made profiles of
 * mode 000). fd >= 0: a file; else the directory at path. */
void hsr_owner_may_use(int fd, const char *dir)
{
    struct stat st;
    mode_t need = fd >= 0 ? S_IRUSR | S_IWUSR : S_IRWXU;
    if (fd >= 0 ? fstat(fd, &st) != 0 : stat(dir, &st) != 0)
        return;
    if ((st.st_mode & need) == need)
        return;
    mode_t mode = (st.st_mode & 07777) | need;
    (void)(fd >= 0 ? fchmod(fd, mode) : chmod(dir, mode));
}
