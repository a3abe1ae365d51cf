# warden-case: ast-literal-eval-tuple-keys
# group: BENIGN
# technique: ast.literal_eval of a dict with tuple keys read from text
# expect-static: allow
# expect-output: OK: 2 cells, (0, 1) -> 5
from ast import literal_eval

grid = literal_eval("{(0, 0): 3, (0, 1): 5}")
print(f"OK: {len(grid)} cells, (0, 1) -> {grid[(0, 1)]}")
