# warden-case: difflib-compare-texts
# group: BENIGN
# technique: difflib ratio and unified diff
# expect-static: allow
# expect-output: OK: similarity 0.80, 2 changed lines
import difflib

a = "the cat sat on the mat"
b = "the cat sat on a hat"
ratio = difflib.SequenceMatcher(None, "abcde", "abcfe").ratio()
old = ["alpha", "beta", "gamma"]
new = ["alpha", "BETA", "gamma"]
diff = list(difflib.unified_diff(old, new, lineterm=""))
changed = [d for d in diff if d[:1] in "+-" and not d.startswith(("+++", "---"))]
print("\n".join(diff))
print("close match:", difflib.get_close_matches("appel", ["apple", "ape", "peach"]))
print(f"OK: similarity {ratio:.2f}, {len(changed)} changed lines")
