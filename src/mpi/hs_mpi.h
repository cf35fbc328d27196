/* hs_mpi.h — the MPI layer's call bracket, used by every generated wrapper. */
#ifndef HS_MPI_H
#define HS_MPI_H
/* fn: the MPI function's name (a string literal), for calipers and timeline labels */
void hs_mpi_enter(const char *fn);  /* outermost call: the thread's allocations count for "[MPI]" */
void hs_mpi_leave(const char *fn);
#endif
