! Solves a random, diagonally dominant system with reference LAPACK's SGESV. Linked with -lblasoffload
! ahead of the reference LAPACK/BLAS, so SGETRF's blocked code reaches SGEMM (and friends) through
! blasoffload. Prints PASS when the scaled residual ||Ax - b|| / (||A|| ||x|| n eps) is small.
program sgesv_solve
  implicit none
  integer, parameter :: n = 200, nrhs = 1
  real, allocatable :: a(:, :), a0(:, :), b(:, :), x(:, :), r(:)
  integer, allocatable :: ipiv(:)
  integer :: info, i, j
  integer, allocatable :: seed(:)
  integer :: nseed
  real :: anorm, xnorm, rnorm, ratio
  real, parameter :: bound = 10.0

  allocate (a(n, n), a0(n, n), b(n, nrhs), x(n, nrhs), r(n), ipiv(n))
  call random_seed(size=nseed)
  allocate (seed(nseed))
  seed = 12345
  call random_seed(put=seed)
  call random_number(a)
  a = a - 0.5
  do i = 1, n
    a(i, i) = a(i, i) + real(n)  ! diagonally dominant: well conditioned, no pivoting trouble
  end do
  call random_number(b)
  a0 = a
  x = b
  call sgesv(n, nrhs, a, n, ipiv, x, n, info)
  if (info /= 0) then
    print '(a, i0)', 'FAIL: SGESV returned INFO = ', info
    stop 1
  end if
  ! Residual in double precision against the saved matrix.
  do i = 1, n
    r(i) = real(dot_product(real(a0(i, :), 8), real(x(:, 1), 8)) - real(b(i, 1), 8))
  end do
  anorm = 0.0
  do j = 1, n
    anorm = max(anorm, sum(abs(a0(:, j))))  ! 1-norm
  end do
  xnorm = sum(abs(x(:, 1)))
  rnorm = sum(abs(r))
  ratio = rnorm / (anorm * xnorm * real(n) * epsilon(1.0))
  print '(a, es12.4)', 'scaled residual ||Ax-b||/(||A|| ||x|| n eps) = ', ratio
  if (.not. (ratio < bound)) then
    print '(a)', 'FAIL: residual too large'
    stop 1
  end if
  print '(a)', 'PASS'
end program sgesv_solve
