! Fortran MPI program (tests/mpi/test_fortran.py), through mpif90 and `use mpi`
! (or `use mpi_f08` when compiled with -DHS_F08):
! every rank allocates 2 arrays of 4,000,000 bytes outside MPI calls, 3 of 7777 bytes
! between MPI_PCONTROL(1) and MPI_PCONTROL(0) (region "pcontrol-1"), and the send and
! receive arrays of an MPI_ALLTOALL of 1000 integers per rank (4000 * size bytes each).
! With the argument "abort", rank 1 calls MPI_ABORT(MPI_COMM_WORLD, 23) once it holds its
! 2 arrays (tests/mpi/test_fortran.py).
program mpi_job_fortran
#ifdef HS_F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer, parameter :: per_rank = 1000
  integer :: ierr, rank, nprocs, i, r, bad
  character(len=16) :: mode
  real(8), allocatable :: big1(:), big2(:)
  integer(1), allocatable :: small(:)
  integer, allocatable :: sendbuf(:), recvbuf(:)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  allocate(big1(500000), big2(500000))
  big1 = rank
  big2 = 2 * rank
  mode = ""
  if (command_argument_count() > 0) call get_command_argument(1, mode)
  if (mode == "abort" .and. rank == 1) call MPI_ABORT(MPI_COMM_WORLD, 23, ierr)
  call MPI_PCONTROL(1)
  do i = 1, 3
    allocate(small(7777))
    small = int(i, 1)
    deallocate(small)
  end do
  call MPI_PCONTROL(0)
  allocate(sendbuf(per_rank * nprocs), recvbuf(per_rank * nprocs))
  do i = 1, per_rank * nprocs
    sendbuf(i) = rank * 100000 + i
  end do
  call MPI_ALLTOALL(sendbuf, per_rank, MPI_INTEGER, recvbuf, per_rank, MPI_INTEGER, &
                    MPI_COMM_WORLD, ierr)
  bad = 0
  do r = 0, nprocs - 1
    if (recvbuf(r * per_rank + 1) /= r * 100000 + rank * per_rank + 1) bad = 1
  end do
  deallocate(sendbuf, recvbuf, big1, big2)
  call MPI_FINALIZE(ierr)
  if (bad /= 0) stop 1
end program mpi_job_fortran
