% An interpreter-heavy Octave script (BENCHMARKS.md, "Stacks at production cost"):
% 120,000 iterations of small string, vector and cell operations, each a few
% allocations made deep inside Octave's tree evaluator (about 25 M in all).
s = 0;
c = {};
for i = 1:120000
  x = sprintf('%d', i);
  s = s + numel(x) + sum([i, 2*i, 3*i]);
  if mod(i, 100) == 0
    c{end+1} = x;
  end
end
printf('%d %d\n', s, numel(c));
