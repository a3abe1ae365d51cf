# warden-case: nltk-ngrams-treebank
# group: BENIGN
# technique: nltk ngrams and the Treebank word tokenizer (no data files)
# expect-static: allow
# expect-output: OK: words ['The', 'quick', 'brown', 'fox'], bigrams 7
from nltk.tokenize import TreebankWordTokenizer
from nltk.util import ngrams

words = TreebankWordTokenizer().tokenize("The quick brown fox doesn't jump.")
bigrams = list(ngrams(words, 2))
print(f"OK: words {words[:4]}, bigrams {len(bigrams)}")
