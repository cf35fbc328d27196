! Fortran regions through the heapscope module (tests/e2e/test_region_api.py):
! ALLOCATE of 2500 doubles (20000 bytes) 6 times inside "assemble", 2 times in
! "assemble/solve".
program rec_fortran
  use heapscope
  implicit none
  real(8), allocatable :: a(:)
  integer :: i
  call heapscope_begin("assemble")
  do i = 1, 6
    allocate(a(2500))
    a = i
    deallocate(a)
  end do
  call heapscope_begin("solve")
  do i = 1, 2
    allocate(a(2500))
    a = i
    deallocate(a)
  end do
  call heapscope_end()
  call heapscope_end()
  print '(a)', 'fortran done'
end program
