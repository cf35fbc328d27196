% Octave's sparse LU of a 3,000-column symmetric matrix: UMFPACK grows its workspace
% by realloc (89 to 142 MiB) and shrinks it (to 44 MiB), the pattern that showed
% hsmalloc copying huge blocks where glibc moves their pages (scripts/hsmalloc_real_apps.sh).
warning("off", "all");  % lu with three outputs warns that it may fail on sparse input
rand("state", 3); randn("state", 3);
n = 3000;
S = sprandsym(n, 0.003) + speye(n) * 20;
[L, U, P] = lu(S);
printf("%d %d %.10e\n", nnz(L), nnz(U), full(sum(abs(U(:)))));
