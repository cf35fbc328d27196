/*
 * mpi_library.h — the MPI library the process runs on (mpi_library.c), as the MPI
 * layer names it (heapscope__mpi_library, layer_abi.h).
 */
#ifndef HSR_MPI_LIBRARY_H
#define HSR_MPI_LIBRARY_H

#include "common.h"
#include "output/profile_writer.h"

/* The job file's JOB_MPI_LIBRARY (when the layer named one) and JOB_COMMAND chunks:
 * rank 0's library and command line. */
HSR_HIDDEN void hsr_mpi_library_job_chunks(struct hsr_buf *b);

#endif
