"""The HIVE benchmarks: BiasMD (ambiguous pronouns) and DiseaseMatcher (which patient has D),
with their graders."""
