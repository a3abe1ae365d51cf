# warden-case: nltk-regexp-tokenize-stem
# group: BENIGN
# technique: nltk tools that need no data: RegexpTokenizer, PorterStemmer, FreqDist
# expect-static: allow
# expect-output: OK: 12 tokens, most common stem 'runner' x2
from nltk import FreqDist
from nltk.stem import PorterStemmer
from nltk.tokenize import RegexpTokenizer

text = "Runners were running quickly; the runner runs every morning and ran yesterday."
tokens = RegexpTokenizer(r"[a-z]+").tokenize(text.lower())
stems = [PorterStemmer().stem(t) for t in tokens]
common = FreqDist(stems).most_common(1)[0]
print(f"OK: {len(tokens)} tokens, most common stem {common[0]!r} x{common[1]}")
