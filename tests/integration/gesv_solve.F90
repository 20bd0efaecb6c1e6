! Solves a random, diagonally dominant system with reference LAPACK's SGESV or DGESV (built twice: -DWP=4 with
! -DGESV=sgesv, -DWP=8 with -DGESV=dgesv). Linked with -lblasoffload ahead of the reference LAPACK/BLAS, so
! xGETRF's blocked code reaches xGEMM and xTRSM (and xGETRS's solves xTRSM) through blasoffload. Prints PASS when
! the scaled residual ||Ax - b|| / (||A|| ||x|| n eps), computed in twice the working precision, is small.
program gesv_solve
  implicit none
  integer, parameter :: wp = WP
  integer, parameter :: rp = selected_real_kind(2 * precision(1.0_wp))  ! residual precision: double / quad
  integer, parameter :: n = 200, nrhs = 1
  real(wp), allocatable :: a(:, :), a0(:, :), b(:, :), x(:, :)
  real(rp), allocatable :: r(:)
  integer, allocatable :: ipiv(:)
  integer :: info, i, j
  integer, allocatable :: seed(:)
  integer :: nseed
  real(rp) :: anorm, xnorm, rnorm, ratio
  real(rp), parameter :: bound = 10.0_rp

  allocate (a(n, n), a0(n, n), b(n, nrhs), x(n, nrhs), r(n), ipiv(n))
  call random_seed(size=nseed)
  allocate (seed(nseed))
  seed = 12345
  call random_seed(put=seed)
  call random_number(a)
  a = a - 0.5_wp
  do i = 1, n
    a(i, i) = a(i, i) + real(n, wp)  ! diagonally dominant: well conditioned, no pivoting trouble
  end do
  call random_number(b)
  a0 = a
  x = b
  call GESV(n, nrhs, a, n, ipiv, x, n, info)
  if (info /= 0) then
    print '(a, i0)', 'FAIL: xGESV returned INFO = ', info
    stop 1
  end if
  do i = 1, n
    r(i) = dot_product(real(a0(i, :), rp), real(x(:, 1), rp)) - real(b(i, 1), rp)
  end do
  anorm = 0.0_rp
  do j = 1, n
    anorm = max(anorm, sum(abs(real(a0(:, j), rp))))  ! 1-norm
  end do
  xnorm = sum(abs(real(x(:, 1), rp)))
  rnorm = sum(abs(r))
  ratio = rnorm / (anorm * xnorm * real(n, rp) * real(epsilon(1.0_wp), rp))
  print '(a, i0, a, es12.4)', 'kind ', wp, ': scaled residual ||Ax-b||/(||A|| ||x|| n eps) = ', ratio
  if (.not. (ratio < bound)) then
    print '(a)', 'FAIL: residual too large'
    stop 1
  end if
  print '(a)', 'PASS'
end program gesv_solve
