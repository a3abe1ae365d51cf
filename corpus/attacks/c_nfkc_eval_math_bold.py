# warden-case: c-nfkc-eval-math-bold
# group: C
# technique: mathematical bold letters that CPython NFKC-normalises to eval
# variant: unicode-lookalike
# references: https://peps.python.org/pep-3131/
# expect-static: deny
# expect-rules: DYN401
# expect-jail: contained
𝐞𝐯𝐚𝐥("__import__('os').system('id')")
