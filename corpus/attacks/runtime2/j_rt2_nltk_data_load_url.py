# warden-case: j-rt2-nltk-data-load-url
# group: J
# technique: nltk.data.load of a loopback URL
# variant: computed-string
# expect-static: deny
# expect-rules: REF201
# expect-jail: no-connect tcp4:127.0.0.1:5758
# expect-runtime: NET802
import nltk.data

nltk.data.load("http://localhost:5758/x.txt", format="text")
