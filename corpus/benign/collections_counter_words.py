# warden-case: collections-counter-words
# group: BENIGN
# technique: Counter word frequencies
# expect-static: allow
# expect-output: OK: top word 'the' x4
import re
from collections import Counter

text = """The quick brown fox jumps over the lazy dog.
The dog sleeps; the fox runs."""
words = re.findall(r"[a-z]+", text.lower())
counts = Counter(words)
print(counts.most_common(3))
word, n = counts.most_common(1)[0]
print(f"OK: top word '{word}' x{n}")
