% A user's script as Octave runs it: a vector grown one element at a time, then
% summed by a scalar loop. GROW_N (environment) is the number of elements.
n = str2double(getenv("GROW_N"));
x = [];
for i = 1:n
  x(end+1) = i * 0.5;
end
s = 0;
for i = 1:numel(x)
  s = s + x(i);
end
printf("%.1f\n", s);
