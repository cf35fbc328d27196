/* hs_mpi.h — the MPI layer's call bracket, used by every generated wrapper. */
#ifndef HS_MPI_H
#define HS_MPI_H
void hs_mpi_enter(void);  /* outermost call: the thread's allocations count for "[MPI]" */
void hs_mpi_leave(void);
#endif
