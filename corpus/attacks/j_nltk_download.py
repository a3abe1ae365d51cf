# warden-case: j-nltk-download
# group: J
# technique: nltk.download fetches data over the network and writes it under the home directory
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained; layer ns:net
import nltk

nltk.download("punkt_tab", quiet=True)
print(nltk.word_tokenize("network access"))
