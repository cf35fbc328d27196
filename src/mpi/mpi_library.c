/*
 * mpi_library.c — names the MPI library the process runs on, once, at its first MPI
 * call (hsr_mpi_attach): MPI_Get_version and MPI_Get_library_version, which the
 * standard lets a program call before MPI_Init, handed to the recorder
 * (heapscope__mpi_library, layer_abi.h), which writes them to the profile and, on
 * rank 0, to the job file. So every recording says which MPI it measured
 * (`heapscope scaling` sets Open MPI and MPICH side by side by it).
 */
#include <mpi.h>
#include <stdatomic.h>

#include "mpi_layer.h"

#pragma weak heapscope__mpi_library

void hsr_mpi_name_library(void)
{
    static atomic_int named;
    if (!heapscope__mpi_library || atomic_exchange(&named, 1))
        return;
    static char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, version = 0, subversion = 0;
    if (PMPI_Get_library_version(text, &len) != MPI_SUCCESS)
        len = 0;
    text[len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING ? len : 0] = 0;
    if (PMPI_Get_version(&version, &subversion) != MPI_SUCCESS)
        version = subversion = 0;
    heapscope__mpi_library(version, subversion, text);
}
