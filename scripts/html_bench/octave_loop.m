% a small interpreter-heavy script: strings, cells, structs, matrices
s = struct();
c = {};
for i = 1:300
  name = sprintf('field_%d', mod(i, 37));
  s.(name) = rand(3, 3) * i;
  c{end+1} = num2str(i);
  m = magic(4) + i;
  v = sum(m(:)) / numel(m);
end
x = strjoin(c, ',');
disp(numel(x));
