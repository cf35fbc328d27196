"""Analyses of recorded profiles (steps three and four of the method).

Every analysis here works on plain data, never on files:

  stacks      WeightedStack: a symbolized call path with a count and bytes,
              the common currency of the call graph, the diff and the exports.
  loading     profiles + symbolizer -> WeightedStacks (the one bridge to the reader).
  selection   which sizes and regions a command keeps (--size SPEC, --region R).
  classify    is a frame an entry point, runtime code or user code.
  callgraph   merge stack types into a call graph and rank the fix targets.
  diff        compare two sets of profiles per size, region and stack type.
"""
