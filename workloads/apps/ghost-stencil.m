% A 1-D heat stencil on arrays of 2^k + 2 doubles (a ghost cell at each end): the
% ghost-layer mix's sizes in an interpreter. Every step makes an array of 514, 2,050 or
% 8,194 doubles (4,112, 16,400, 65,552 bytes; half, 3/10, 1/5) and its temporaries.
% octave --no-gui --norc -q ghost-stencil.m   (prints one sum)
n = [514 2050 8194];
s = 0;
for it = 1:6000
  r = mod(it, 10);
  k = n(1 + (r >= 5) + (r >= 8));
  u = ones(k, 1);
  u(1) = 0; u(end) = 0;
  v = u(2:end-1) + 0.25 * (u(1:end-2) - 2 * u(2:end-1) + u(3:end));
  s = s + sum(v);
end
printf("%.6f\n", s);
