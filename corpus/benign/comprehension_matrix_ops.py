# warden-case: comprehension-matrix-ops
# group: BENIGN
# technique: list/dict/set comprehensions over a matrix
# expect-static: allow
# expect-output: OK: transpose [[1, 4], [2, 5], [3, 6]], diag sum 15
matrix = [[1, 2, 3], [4, 5, 6]]
transpose = [[row[i] for row in matrix] for i in range(len(matrix[0]))]
square = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
diag = sum(square[i][i] for i in range(3))
squares = {n: n * n for n in range(5)}
evens = {v for row in square for v in row if v % 2 == 0}
print(squares, sorted(evens))
print(f"OK: transpose {transpose}, diag sum {diag}")
