"""A Python run with stacks of many kinds and sizes, for scripts/bench_analysis_speed.py:
json, re, decimal, fractions, csv, difflib, deques, bytearrays of every size, recursion.
Recorded with `heapscope record --sizes all -- python3 scripts/bench_python_workload.py`."""
import json, re, collections, decimal, fractions, itertools, textwrap, difflib, csv, io, statistics, heapq, bisect, random
random.seed(1)
data = [{"k": i, "v": [random.random() for _ in range(i % 17)], "s": "x" * (i % 300)} for i in range(20000)]
text = json.dumps(data)
back = json.loads(text)
words = re.findall(r"\w+", text[:200000])
c = collections.Counter(words)
d = sum(decimal.Decimal(i) / 7 for i in range(3000))
f = sum(fractions.Fraction(1, i) for i in range(1, 400))
s = io.StringIO(); w = csv.writer(s)
for row in data[:5000]: w.writerow([row["k"], len(row["v"]), row["s"][:10]])
lines = textwrap.wrap(" ".join(words[:20000]), 60)
diff = list(difflib.unified_diff(lines[:300], lines[5:305]))
m = statistics.median(x for r in data for x in r["v"])
h = heapq.nsmallest(100, (x for r in data for x in r["v"]))
deq = collections.deque(maxlen=1000)
for i in range(100000): deq.append((i, str(i)))
big = [bytearray(n) for n in range(0, 300000, 37)]
def rec(n): return [rec(n - 1)] if n else []
for i in range(200): rec(i % 150)
print(len(back), len(c), d > 0, f > 0, len(diff), m > 0, len(h), len(big))
