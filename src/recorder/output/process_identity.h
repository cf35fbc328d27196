/*
 * process_identity.h — this process's MPI rank and job id from the launcher's
 * environment, and the owner's access to the recorder's files (process_identity.c).
 */
#ifndef HSR_PROCESS_IDENTITY_H
#define HSR_PROCESS_IDENTITY_H

#include "common.h"

/* the rank, or -1 (not under a launcher that says one) */
HSR_HIDDEN int hsr_mpi_rank(void);
/* the job id, safe in a file name; "" when no launcher exports one */
HSR_HIDDEN const char *hsr_profile_job_id(void);
/* fd >= 0: that file, else the directory `dir`: its owner may read and write it,
 * whatever the program's umask */
HSR_HIDDEN void hsr_owner_may_use(int fd, const char *dir);

#endif
