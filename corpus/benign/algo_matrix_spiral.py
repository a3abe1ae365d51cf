# warden-case: algo-matrix-spiral
# group: BENIGN
# technique: spiral traversal and rotation of a matrix
# expect-static: allow
# expect-output: OK: spiral [1, 2, 3, 6, 9, 8, 7, 4, 5]
def spiral(m):
    out = []
    while m:
        out.extend(m[0])
        m = [list(row) for row in zip(*m[1:])][::-1]
    return out


def rotate(m):
    return [list(row) for row in zip(*m[::-1])]


grid = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
print("rotated:", rotate(grid))
print(f"OK: spiral {spiral(grid)}")
