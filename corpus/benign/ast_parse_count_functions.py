# warden-case: ast-parse-count-functions
# group: BENIGN
# technique: ast.parse and ast.walk to count the functions of a code snippet
# expect-static: allow
# expect-output: OK: 2 functions: area, perimeter
import ast

source = """
def area(w, h):
    return w * h

def perimeter(w, h):
    return 2 * (w + h)
"""
tree = ast.parse(source)
names = [node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
print(f"OK: {len(names)} functions: {', '.join(names)}")
