# warden-case: ast-literal-eval-config
# group: BENIGN
# technique: ast.literal_eval parses a Python-literal configuration string
# expect-static: allow
# expect-output: OK: 3 thresholds, mode=strict
import ast

text = "{'thresholds': [0.1, 0.5, 0.9], 'mode': 'strict', 'enabled': True}"
config = ast.literal_eval(text)
print(f"OK: {len(config['thresholds'])} thresholds, mode={config['mode']}")
